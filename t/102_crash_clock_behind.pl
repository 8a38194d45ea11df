
# Copyright (c) 2026, snowflake contributors

# After a crash (immediate stop) with the server's clock
# 10 minutes behind, every new ID is larger than every earlier one (max_drift
# raised), or the generator refuses (default max_drift); back at the real time
# it goes on above everything issued.  The scenario is in t/SnowflakeTest.pm.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use SnowflakeTest;
use Test::More;

need_libfaketime();

clock_behind_restart_scenario('immediate');

done_testing();
