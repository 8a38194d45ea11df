# Issue 3, test 1: after a clean restart with the server's clock 10 minutes
# behind, every new ID is larger than every earlier one (max_drift raised), or
# the generator refuses (default max_drift); back at the real time it goes on
# above everything issued.  The scenario is in t/SnowflakePersist.pm.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Utils;
use SnowflakePersist;
use Test::More;

plan skip_all => "libfaketime not found at $libfaketime" unless -e $libfaketime;

clock_behind_restart_scenario('fast');

done_testing();
