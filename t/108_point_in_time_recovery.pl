
# Copyright (c) 2026, snowflake contributors

# Pins the mark's WAL records in archived WAL and their redo in archive
# recovery (README, "Guarantees": point-in-time recovery resumes above every
# mark it replayed).
#
# A primary with WAL archiving issues IDs, a base backup is taken (its mark
# file covers only those first IDs), and then the primary issues IDs that
# move the mark several times (its clock moved forward a few seconds at a
# time, more than the one-second mark window) and switches WAL so that they
# are archived.  The backup is restored on a new node that recovers to the
# end of the archive and is promoted, with its clock an hour behind: the
# backup's mark file and the clock both lie below the later IDs, so only the
# replayed mark records can keep its IDs above them.

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

need_libfaketime();

my $primary = snowflake_node('pitr_primary', worker_id => 1,
	init => { allows_streaming => 1, has_archiving => 1 });
start_with_fake_clock($primary, '+0');
$primary->safe_psql('postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE ids (id bigint NOT NULL, phase int NOT NULL);
	INSERT INTO ids SELECT snowflake_nextval(), 1 FROM generate_series(1, 1000);
});

$primary->backup('b1');
my $backup_mark_file = $primary->backup_dir . '/b1/snowflake.mark';
ok(-f $backup_mark_file, 'the base backup holds a mark file');
my $backup_mark = slurp_file($backup_mark_file);
like($backup_mark, qr/^\d+\n\z/, "the backup's mark file holds one ID in decimal");
chomp $backup_mark;

issue_ids_across_marks($primary, 2, 5,
	'after the backup, the IDs crossed the mark at least 5 times');
my $max_archived = max_id($primary);
is($primary->safe_psql('postgres', "SELECT ${backup_mark}::bigint < $max_archived"),
	't', "the backup's mark file does not cover the IDs issued after the backup");

# Archive everything up to here.
my $segment = $primary->safe_psql('postgres',
	'SELECT pg_walfile_name(pg_current_wal_lsn())');
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
$primary->poll_query_until('postgres',
	"SELECT last_archived_wal >= '$segment' FROM pg_stat_archiver")
  or die "timed out waiting for $segment to be archived";
$primary->stop;

# Restore the backup from the archive, to its end, then promote (no
# recovery target).  The restored node archives nothing of its own.
my $restored = PostgreSQL::Test::Cluster->new('pitr_restored');
$restored->init_from_backup($primary, 'b1', has_restoring => 1, standby => 0);
set_snowflake_conf(
	$restored,
	'archive_mode' => 'off',
	'snowflake.max_drift' => 4000000);
my $log_offset = -s $restored->logfile // 0;
start_with_fake_clock($restored, '-3600');
$restored->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'timed out waiting for the end of recovery';
clock_offset_ok($restored, -3600, "the restored node's clock is an hour behind");

my $log = slurp_file($restored->logfile, $log_offset);
like($log, qr/restored log file "\Q$segment\E" from archive/,
	'server log: the last archived segment was replayed');
like($log, qr/archive recovery complete/, 'server log: archive recovery completed');
is($restored->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	'6000', 'the restored node has every row committed before the archived point');
is($restored->safe_psql('postgres', "SELECT max(id) = $max_archived FROM ids"),
	't', 'the restored node has the last ID issued before the archived point');
is( $restored->safe_psql(
		'postgres', "SELECT mark_id >= $max_archived FROM snowflake_stats"),
	't', 'archive recovery raised the mark above every archived ID');
is( $restored->safe_psql(
		'postgres',
		"SELECT (snowflake_parse($max_archived)).created_at > clock_timestamp()"),
	't', 'the restored node\'s clock is behind the last archived ID');

issue_above($restored, 3, 1000, $max_archived,
	'every ID from the restored node is larger than every archived ID');
is($restored->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	'7000', 'every phase issued its IDs');

$restored->stop;
done_testing();
