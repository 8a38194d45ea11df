# Copyright (c) 2026, snowflake contributors

# Failover under an HA manager, pg_auto_failover: a monitor and two data
# nodes that share worker id 7 (a physical standby takes over its primary's
# ID stream).  snowflake is configured on the first node before the second
# is created from it, with shared_preload_libraries merged with the one
# pg_autoctl writes.  Two clients insert throughout, each a connection per
# row to whichever node is primary, while pg_autoctl performs two
# switchovers and then, after the primary and its keeper are killed, a
# failover.  Before each promotion the future primary's clock is set further
# behind the current primary's than a promotion can take in this test
# (libfaketime, in the server only), so only the mark it replayed can keep its
# IDs above the old ones.
# Afterwards: no ID was issued twice, each client's IDs increase in the
# order their inserts were acknowledged, every term's IDs lie above every
# earlier term's, and no acknowledged row is missing.
#
# Every wait of the test gives up after the default timeout and then says
# what it waited for and how things stood: the monitor's view, each data
# node's role and client sessions, the end of each keeper's log, and each
# client's progress and what its psql is blocked in (situation() below).

use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;

use File::Spec;
use IPC::Run;
use Time::HiRes ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

need_libfaketime();

my $monitor = PostgreSQL::Test::Cluster->new('monitor');
my @nodes = map { PostgreSQL::Test::Cluster->new("node$_") } 1 .. 2;

my ($pg_autoctl) =
  grep { -x $_ } map { "$_/pg_autoctl" } split /:/, $ENV{PATH};
need_package('postgresql-@PG@-auto-failover',
	defined $pg_autoctl
	  && -e $monitor->config_data('--pkglibdir') . '/pgautofailover.so',
	'pg_auto_failover is not installed');

# How far each new primary's clock is set behind the old one's: longer than
# the waits of one promotion below (a switchover's --wait, then the wait for
# the new states) can last before the test looks at the clocks, so that
# however slow the machine, the new primary's clock is still behind the old
# primary's last ID when the test checks it.  The IDs may run that far ahead
# of the clock at each of the three promotions, hence max_drift.
my $behind = 2 * $PostgreSQL::Test::Utils::timeout_default + 60;
my $max_drift = 4 * $behind;

my $tempdir = PostgreSQL::Test::Utils::tempdir;
my $host = $monitor->host;
my $bindir = $monitor->config_data('--bindir');

# pg_autoctl keeps its configuration and state under the XDG directories,
# and takes defaults from the libpq variables, which the test harness sets:
# only PGHOST stays, the servers' socket directory, through which the monitor's
# pg_autoctl reaches its server (it has no --pghost).
my %autoctl_env = (
	XDG_CONFIG_HOME => "$tempdir/xdg/config",
	XDG_DATA_HOME => "$tempdir/xdg/data",
	XDG_RUNTIME_DIR => "$tempdir/xdg/run",
	PGHOST => $host,
	PG_CONFIG => $monitor->config_data('--bindir') . '/pg_config');
mkdir "$tempdir/xdg";
mkdir $autoctl_env{XDG_RUNTIME_DIR}, 0700;

sub autoctl
{
	my @args = @_;
	local %ENV = (%ENV);
	delete @ENV{qw(PGPORT PGDATA PGDATABASE PGUSER)};
	@ENV{ keys %autoctl_env } = values %autoctl_env;
	my ($stdout, $stderr) = ('', '');

	note "running: pg_autoctl @args";
	my $ok = eval {
		IPC::Run::run([ $pg_autoctl, @args ],
			'>', \$stdout, '2>', \$stderr,
			IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	};
	die "timed out waiting for pg_autoctl @args ($@); it printed:\n$stdout$stderr"
	  . situation()
	  if $@;
	die "pg_autoctl @args failed:\n$stdout$stderr" unless $ok;
	note "pg_autoctl @args:\n$stdout$stderr";
	return $stdout;
}

# The keepers (and the monitor's service) run in sessions of their own, so
# that one can be killed with everything it started.
my %services;

sub start_service
{
	my ($node) = @_;
	my $log = $node->basedir . '/pg_autoctl.log';
	local %ENV = (%ENV);
	delete @ENV{qw(PGPORT PGDATA PGDATABASE PGUSER)};
	@ENV{ keys %autoctl_env } = values %autoctl_env;

	my $handle = IPC::Run::start(
		[ 'setsid', $pg_autoctl, 'run', '--pgdata', $node->data_dir ],
		'<', '/dev/null', '>>', $log, '2>&1');
	my $pid = $handle->{KIDS}[0]{PID};

	# (setsid runs in the child once it has been forked)
	my $tries = 0;
	while (getpgrp($pid) != $pid)
	{
		die "timed out waiting for pg_autoctl run for "
		  . $node->name
		  . " (pid $pid) to be in a session of its own, after 5 s"
		  if ++$tries > 100;
		Time::HiRes::usleep(50_000);
	}
	$services{ $node->name } = { handle => $handle, pid => $pid };
	return;
}

# Wait until the node accepts connections.  poll_query_until would do, but
# it writes its query to psql's standard input, and a psql that gives up on
# a server still starting exits before reading it: IPC::Run then dies of
# the broken pipe instead of trying again.  pg_isready reads nothing.
sub wait_accepting
{
	my ($node) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	my ($out, $err);

	until (IPC::Run::run(
			[ $node->installed_command('pg_isready'), '-h', $node->host,
				'-p', $node->port ],
			'<', \undef, '>', \$out, '2>', \$err))
	{
		die 'timed out waiting for '
		  . $node->name
		  . ' to accept connections; pg_isready says: '
		  . $out
		  . $err
		  . situation()
		  if time() > $deadline;
		Time::HiRes::usleep(100_000);
	}
	return;
}

sub kill_service
{
	my ($node, $signal) = @_;
	my $service = delete $services{ $node->name } or return;

	kill $signal, -$service->{pid};
	wait_until_ended($service->{handle},
		"pg_autoctl run for " . $node->name . " to exit after SIG$signal");
	return;
}

# Wait until the program of an IPC::Run harness has exited, and reap it.
# Its standard streams must all be files: a harness with a pipe, even
# standard input from \undef, stays pumpable() until it is pumped.
sub wait_until_ended
{
	my ($handle, $what) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;

	while ($handle->pumpable)
	{
		die "timed out waiting for $what" . situation() if time() > $deadline;
		Time::HiRes::usleep(100_000);
	}
	$handle->finish;
	return;
}

# The test makes the data directories of the monitor and the first node
# itself (pg_autoctl takes an existing one), so that every server has its
# socket in the test's directory from its first start, rather than in the
# compiled-in default, which may not exist; pg_autoctl gets the same
# directory as --pghost.  pg_autoctl's own settings come from an include
# file at the top of postgresql.conf: lines appended later win.
sub initdb_node
{
	my ($node) = @_;

	PostgreSQL::Test::Utils::system_or_bail('initdb', '-D', $node->data_dir,
		'-A', 'trust', '-N', '--no-instructions');
	$node->append_conf(
		'postgresql.conf', qq{
# added by the test
listen_addresses = 'localhost'
unix_socket_directories = '$host'
shared_buffers = 16MB
});
	return;
}

# Wait until the monitor reports each named node in the given state, as
# reported by its keeper and assigned by the monitor.
sub wait_for_states
{
	my (%states) = @_;
	my $want = join(',', map { "$_:$states{$_}" } sort keys %states);
	my $names = join(',', map { "'$_'" } keys %states);
	my $query = qq{
		SELECT string_agg(nodename || ':' || reportedstate, ',' ORDER BY nodename)
		  FROM pgautofailover.node
		 WHERE reportedstate = goalstate AND nodename IN ($names)};

	$monitor->poll_query_until('pg_auto_failover', $query, $want)
	  or die "timed out waiting for the states $want" . situation();
	return;
}

# The clients (see below), each a hash of its harness, its process id and
# the files it writes to.
my @clients;

# Run one query with psql -c (given on the command line rather than on
# standard input, so that a psql that cannot connect exits cleanly), with
# a short connection timeout; returns whether it succeeded, its output and
# its errors.
sub run_psql
{
	my ($node, $dbname, $sql, @options) = @_;
	my ($out, $err) = ('', '');
	my $ok = eval {
		IPC::Run::run(
			[
				$node->installed_command('psql'), '-X', @options, '-d',
				$node->connstr($dbname) . ' connect_timeout=5', '-c', $sql
			],
			'<', \undef, '>', \$out, '2>', \$err,
			IPC::Run::timeout(30));
	};
	$err .= $@ if $@;
	return ($ok, $out, $err);
}

# The output of one query, with column names, or why there is none: for
# the report of a wait that timed out, when any server may be down.
sub query_or_why
{
	my ($node, $dbname, $sql) = @_;
	my ($ok, $out, $err) =
	  run_psql($node, $dbname, $sql, '-A', '-F', ' | ', '-P', 'footer=off');

	return $out if $ok;
	$err =~ s/\s+$//;
	return "(no answer: $err)\n";
}

# The last $count lines of a file, if it exists.
sub tail_of
{
	my ($file, $count) = @_;

	return "(no file $file)\n" unless -e $file;
	my @lines = split /\n/, slurp_file($file);
	splice @lines, 0, -$count if @lines > $count;
	return join('', map { "$_\n" } @lines);
}

# What the processes under $pid run and what each is blocked in, from
# /proc: its kernel wait channel tells a psql waiting for its server from
# one blocked writing to a full pipe.
sub process_tree
{
	my ($pid, $indent) = @_;
	my $out = '';

	opendir my $dh, '/proc' or return "(cannot read /proc: $!)\n";
	my @all = grep { /^\d+$/ } readdir $dh;
	closedir $dh;
	my $read = sub {
		my ($file) = @_;
		open my $fh, '<', $file or return '';
		local $/;
		my $text = <$fh> // '';
		close $fh;
		return $text;
	};
	my $describe = sub {
		my ($p) = @_;
		my $cmd = $read->("/proc/$p/cmdline");
		$cmd =~ s/\0/ /g;
		$cmd = substr($cmd, 0, 100) . '...' if length($cmd) > 100;
		my ($state) = $read->("/proc/$p/stat") =~ /\) (\S)/;
		return sprintf("%spid %d, state %s, waiting in %s: %s\n",
			$indent, $p, $state // '?', $read->("/proc/$p/wchan") || '-', $cmd);
	};
	$out .= $describe->($pid);
	foreach my $child (@all)
	{
		my ($ppid) = $read->("/proc/$child/stat") =~ /\) \S (\d+)/;
		$out .= process_tree($child, "$indent  ")
		  if defined $ppid && $ppid == $pid;
	}
	return $out;
}

# How things stand, for the message of a wait that timed out: the monitor's
# view of the nodes and its last events, each data node's role and client
# sessions and the end of its keeper's log, and each client's progress,
# last errors and processes.
sub situation
{
	my $report = "\n--- the monitor's view of the nodes:\n"
	  . query_or_why($monitor, 'pg_auto_failover',
		'SELECT nodename, nodeport, reportedstate, goalstate, reportedpgisrunning, health, reporttime FROM pgautofailover.node ORDER BY nodeid'
	  )
	  . "--- the monitor's last events:\n"
	  . query_or_why($monitor, 'pg_auto_failover',
		'SELECT eventtime, nodename, reportedstate, goalstate, description FROM (SELECT * FROM pgautofailover.event ORDER BY eventid DESC LIMIT 8) e ORDER BY eventid'
	  );
	foreach my $node (@nodes)
	{
		$report .=
		    '--- '
		  . $node->name
		  . ' (port '
		  . $node->port . "):\n"
		  . query_or_why($node, 'postgres',
			q{SELECT pg_is_in_recovery() AS in_recovery, current_setting('default_transaction_read_only') AS read_only, current_setting('synchronous_standby_names') AS synchronous_standby_names, (SELECT count(*) FROM events) AS events}
		  )
		  . query_or_why($node, 'postgres',
			q{SELECT pid, client_port, state, wait_event_type, wait_event, xact_start, left(query, 60) AS query FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() ORDER BY pid}
		  )
		  . "last lines of its keeper's log:\n"
		  . tail_of($node->basedir . '/pg_autoctl.log', 10);
	}
	foreach my $n (1 .. @clients)
	{
		my $client = $clients[ $n - 1 ];
		my @acked = -e $client->{out} ? split(/\n/, slurp_file($client->{out})) : ();
		$report .= "--- client $n: "
		  . scalar(@acked)
		  . ' IDs acknowledged, the last '
		  . ($acked[-1] // 'none')
		  . '; its loop '
		  . ($client->{handle}->pumpable ? 'runs' : 'has ended')
		  . "; its processes:\n"
		  . process_tree($client->{pid}, '')
		  . "its last errors:\n"
		  . tail_of($client->{err}, 6);
	}
	return $report;
}

# The monitor.  Health checks and timeouts are shortened so that a failover
# takes seconds rather than a minute.
initdb_node($monitor);
autoctl(
	'create', 'monitor',
	'--pgctl', "$bindir/pg_ctl",
	'--pgdata', $monitor->data_dir,
	'--pgport', $monitor->port,
	'--hostname', 'localhost',
	'--auth', 'trust', '--no-ssl');
$monitor->append_conf(
	'postgresql.conf', q{
pgautofailover.health_check_period = 1000
pgautofailover.health_check_timeout = 2000
pgautofailover.health_check_retry_delay = 1000
pgautofailover.health_check_max_retries = 1
pgautofailover.node_considered_unhealthy_timeout = 5000
pgautofailover.primary_demote_timeout = 10000
});
start_service($monitor);
wait_accepting($monitor);
my $monitor_uri =
  'postgres://autoctl_node@localhost:' . $monitor->port . '/pg_auto_failover?sslmode=disable';

# The first node: pg_autoctl registers it, then, before its keeper starts it and
# before any secondary is copied from it, it gets snowflake, with the
# shared_preload_libraries pg_autoctl wrote merged in.  Its server runs under
# a fake clock, at the real time for now.
sub create_node
{
	my ($node, $offset) = @_;
	my $fake_bin = fake_clock_bindir($node, $offset);

	autoctl(
		'create', 'postgres',
		'--pgctl', "$fake_bin/pg_ctl",
		'--pgdata', $node->data_dir,
		'--pghost', $host,
		'--pgport', $node->port,
		'--hostname', 'localhost',
		'--name', $node->name,
		'--monitor', $monitor_uri,
		'--auth', 'trust', '--no-ssl');
	return;
}

initdb_node($nodes[0]);
create_node($nodes[0], '+0');
my $autoctl_conf = slurp_file($nodes[0]->data_dir . '/postgresql-auto-failover.conf');
my ($their_preload) = $autoctl_conf =~ /^shared_preload_libraries = '?([^'\n]*)'?$/m;
ok(defined $their_preload, "pg_autoctl set shared_preload_libraries ($their_preload)");
$nodes[0]->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = '$their_preload, snowflake'
snowflake.worker_id = 7
snowflake.max_drift = '${max_drift}s'
});
start_service($nodes[0]);
wait_for_states(node1 => 'single');
wait_accepting($nodes[0]);
$nodes[0]->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE events (
		id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
		client int NOT NULL,
		port int NOT NULL DEFAULT inet_server_port(),
		tli int NOT NULL
			DEFAULT ('x' || left(pg_walfile_name(pg_current_wal_lsn()), 8))::bit(32)::int);
});
is( $nodes[0]->safe_psql(
		'postgres',
		q{SELECT setting FROM pg_settings WHERE name = 'shared_preload_libraries'}),
	"$their_preload, snowflake",
	'node1 preloads what pg_autoctl asked for and snowflake');
clock_offset_ok($nodes[0], 0, 'node1 runs at the real time');

# The second node is a copy of the first (pg_basebackup), settings included;
# its server runs $behind s behind.
create_node($nodes[1], -$behind);
start_service($nodes[1]);
wait_for_states(node1 => 'primary', node2 => 'secondary');
is( $nodes[1]->safe_psql(
		'postgres', 'SELECT worker_id, pg_is_in_recovery() FROM snowflake_stats'),
	'7|t',
	'node2, a standby, has the same worker id');
clock_offset_ok($nodes[1], -$behind, "node2 runs $behind s behind");
# What makes every acknowledged row survive the failover below.
like(
	$nodes[0]->safe_psql('postgres', 'SHOW synchronous_standby_names'),
	qr/^ANY 1 \(/,
	'node1 commits synchronously, waiting for node2');

# Two clients, each inserting into whichever node is primary, one row per
# transaction and 20 per connection, writing each acknowledged ID in order
# to a file of its own (psql stops at the first error: the connection is
# then made again).  A file, not a pipe to this script: the script reads
# nothing while it waits, and a pipe holds 64 kB, some 3,400 IDs, after
# which psql blocks writing its output and inserts no more.
my $uri =
	'postgresql://localhost:'
  . $nodes[0]->port
  . ',localhost:'
  . $nodes[1]->port
  . '/postgres?target_session_attrs=read-write&connect_timeout=2';

# What the clients rely on: their connection string reaches the primary.
# If it does not (a name that does not resolve, say), stop now rather than
# wait for rows that cannot come.
{
	my ($ok, $out, $err) = (0, '', '');
	eval {
		$ok = IPC::Run::run(
			[
				"$bindir/psql", '-X', '-Atq', '-d', $uri, '-c',
				'SELECT inet_server_port(), pg_is_in_recovery()'
			],
			'<', \undef, '>', \$out, '2>', \$err,
			IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	};
	$err .= $@ if $@;
	die "the clients' connection string $uri does not reach node1, the primary:\n$out$err"
	  unless $ok && $out eq $nodes[0]->port . "|f\n";
}

my $stop_file = "$tempdir/stop_clients";
for my $client (1 .. 2)
{
	my $inserts = join(' ',
		("-c 'INSERT INTO events (client) VALUES ($client) RETURNING id'") x 20);
	my $script = qq{
		while [ ! -e '$stop_file' ]; do
			'$bindir/psql' -X -Atq -v ON_ERROR_STOP=1 -d '$uri' $inserts || sleep 0.1
		done};
	my %run = (
		out => "$tempdir/client$client.out",
		err => "$tempdir/client$client.err");
	$run{handle} = IPC::Run::start([ 'bash', '-c', $script ],
		'<', '/dev/null', '>', $run{out}, '2>', $run{err});
	$run{pid} = $run{handle}{KIDS}[0]{PID};
	push @clients, \%run;
}

# The keepers, the monitor and the servers they run die with the test; the
# clients' loops end once their psql fails.
END
{
	kill 'KILL', -$_->{pid} for values %services;
	if (defined $stop_file && @clients)
	{
		open my $fh, '>', $stop_file;
	}
}

# Wait until $node (by port) holds $count rows of the current term, above
# $floor.  A client's loop ends only when the test stops it: if one has
# ended, fail at once.
sub wait_for_rows
{
	my ($node, $floor, $count) = @_;
	my $port = $node->port;
	my $sql =
	  "SELECT count(*) >= $count FROM events WHERE port = $port AND id > $floor";
	my $what = "$count rows on " . $node->name . " above ID $floor ($sql)";
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;

	while (1)
	{
		my ($ok, $out) = run_psql($node, 'postgres', $sql, '-Atq');
		return if $ok && $out eq "t\n";
		foreach my $n (1 .. @clients)
		{
			die "client $n stopped while the test waited for $what" . situation()
			  unless $clients[ $n - 1 ]{handle}->pumpable;
		}
		die "timed out waiting for $what" . situation() if time() > $deadline;
		Time::HiRes::usleep(100_000);
	}
}

my $primary = 0;
my $offset = 0;
wait_for_rows($nodes[$primary], 0, 20);

foreach my $step (1 .. 3)
{
	my $failover = $step == 3;
	my $old = $nodes[$primary];
	my $new = $nodes[ 1 - $primary ];
	my $what = ($failover ? 'failover' : "switchover $step") . ' to ' . $new->name;

	# The future primary, a standby, runs $behind s behind the current one,
	# which is more than a promotion takes.
	$offset -= $behind;
	set_fake_clock($new, $offset);
	clock_offset_ok($new, $offset, "$what: " . $new->name . " runs $offset s off");

	# Every ID acknowledged so far is at most this one.
	my $last_old = $old->safe_psql('postgres', 'SELECT max(id) FROM events');

	if ($failover)
	{
		kill_service($old, 'KILL');
		wait_for_states($new->name => 'wait_primary');
	}
	else
	{
		autoctl('perform', 'switchover', '--pgdata', $monitor->data_dir,
			'--wait', $PostgreSQL::Test::Utils::timeout_default);
		wait_for_states($new->name => 'primary', $old->name => 'secondary');
	}

	is( $new->safe_psql(
			'postgres',
			"SELECT clock_timestamp() < snowflake_to_timestamptz($last_old)"),
		't',
		"$what: its clock is behind the last ID of the old primary");
	wait_for_rows($new, $last_old, 20);

	# A promotion starts a new timeline, which each row records.
	is( $new->safe_psql(
			'postgres', q{
			SELECT (SELECT min(id) FROM events WHERE tli = t.tli)
			       > (SELECT max(id) FROM events WHERE tli < t.tli)
			  FROM (SELECT max(tli) AS tli FROM events) t}),
		't',
		"$what: every new ID is above every ID of the earlier terms");
	$primary = 1 - $primary;
}
my $final = $nodes[$primary];

# Stop the clients; wait until they finished.
open my $fh, '>', $stop_file or die "could not create $stop_file: $!";
close $fh;
my %acked;
for my $client (1 .. 2)
{
	my $run = $clients[ $client - 1 ];
	wait_until_ended($run->{handle}, "client $client to stop");
	my $errors = slurp_file($run->{err});
	$acked{$client} = [ split /\n/, slurp_file($run->{out}) ];
	note "client $client: "
	  . scalar(@{ $acked{$client} })
	  . " rows acknowledged; its errors:\n$errors";
	unlike($errors, qr/duplicate key/, "client $client: no duplicate-key error");
}

# The acknowledged IDs, in the order each client got them, next to the table.
$final->safe_psql('postgres',
	'CREATE TABLE acked (client int, n int, id bigint)');
for my $client (1 .. 2)
{
	my @ids = @{ $acked{$client} };
	$final->safe_psql('postgres',
		"INSERT INTO acked VALUES "
		  . join(',', map { "($client, $_, $ids[$_ - 1])" } 1 .. @ids));
}
my $rows = $final->safe_psql('postgres', 'SELECT count(*) FROM events');
note "rows: $rows; acknowledged: "
  . $final->safe_psql('postgres', 'SELECT count(*) FROM acked');

is($final->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM acked'),
	't', 'no ID was acknowledged twice');
is( $final->safe_psql(
		'postgres', q{
		SELECT count(*) FILTER (WHERE id <= prev)
		  FROM (SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n) AS prev
		          FROM acked) s}),
	'0',
	'each client\'s IDs increase in the order its inserts were acknowledged');
is( $final->safe_psql(
		'postgres',
		'SELECT count(*) FROM acked a WHERE NOT EXISTS (SELECT FROM events e WHERE e.id = a.id)'),
	'0',
	'every acknowledged row is in the table');

# Along the IDs, the rows form one run per term (timeline), on node1, node2,
# node1 and node2 (the failover) in turn.
is( $final->safe_psql(
		'postgres', q{
		SELECT count(*) FILTER (WHERE tli < prev)
		  FROM (SELECT tli, lag(tli) OVER (ORDER BY id) AS prev FROM events) s}),
	'0',
	'ordered by ID, no row belongs to an earlier term than the row before');
is( $final->safe_psql(
		'postgres', q{
		SELECT string_agg(DISTINCT tli || ':' || port, ',')
		  FROM events}),
	join(',', map { ($_ + 1) . ':' . $nodes[ $_ % 2 ]->port } 0 .. 3),
	'four terms, on node1 and node2 in turn, each on one node');
is( $final->safe_psql(
		'postgres',
		'SELECT worker_id, drift_ms > 0 FROM snowflake_stats'),
	'7|t',
	'the last primary issues IDs ahead of its clock, with the same worker id');

kill_service($_, 'TERM') for $nodes[$primary], $monitor;
done_testing();
