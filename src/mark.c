/*-------------------------------------------------------------------------
 *
 * mark.c
 *	  The persisted high-water mark: a file and a WAL resource manager.
 *
 * Shared memory is empty after a restart or a crash, and a generator that
 * then trusted only the clock could repeat IDs whenever the clock is behind
 * the last ID issued.  So, like a sequence that logs values ahead, the
 * generator never hands out an ID above the durable "mark" (an ID such that
 * every ID issued is <= it); crossing it first makes a new mark, about a
 * second ahead, durable in two places, in this order (sf_persist_mark).
 * While IDs are issued, the background mark writer (mark_writer.c)
 * usually makes it before a call needs it, the same way:
 *
 *	file	SNOWFLAKE_MARK_FILE in the data directory: written to a temporary
 *			file, fsynced, renamed into place, and the directory fsynced.  It
 *			is read when shared memory is set up.
 *	WAL		then a record of our own resource manager, flushed.  It travels
 *			to physical standbys, archives and base backups; its redo raises
 *			the mark in shared memory and, if that raised it, rewrites the
 *			file, so a standby that restarts keeps what it replayed.
 *
 * No ID under the new mark is handed out before both are done.
 *
 * Why both, and why the file first
 * --------------------------------
 * A server that starts from a copy of the data directory and replays WAL
 * from a checkpoint's redo pointer R (crash recovery; a base backup, which
 * copies the files after its checkpoint; a standby; a point-in-time
 * recovery) must resume above every ID its data can hold.  Each such ID was
 * handed out under a mark whose record has some LSN L, after that record was
 * flushed, and so after the mark's file was durable.  Either
 *
 *	L < R	the record was inserted before the checkpoint chose R, so the
 *			file holding the mark was durable before that checkpoint began,
 *			and before any copy that starts from it.  The file is replaced
 *			by rename, which is atomic, and never by a mark below one that
 *			IDs were handed out under (one writer at a time writes a mark
 *			above the mark in shared memory, and redo only raises it), so
 *			whoever reads it later (the startup after a crash, the backup's
 *			copy) finds that mark or a higher one.
 *	L >= R	the record is in the WAL that is replayed: crash recovery
 *			replays all of it, and a backup or point-in-time recovery that
 *			holds the ID in a table replayed the commit of the transaction
 *			that stored it, which follows the record in WAL.  Redo raises
 *			the mark.
 *
 * WAL alone would miss marks logged before R, and the file alone would not
 * reach standbys and archives.  The other order, WAL then file, breaks the
 * first case: a checkpoint that falls between the two puts R after the
 * record while a copy taken after it still finds the old file.
 *
 * A file ahead of WAL is harmless: if the server stops, or the write fails,
 * after the rename but before the record is flushed, the file holds a mark
 * no ID was handed out under, and the generator merely resumes further
 * above.  Standbys and archives never see that mark, and need not: the
 * primary issued nothing under it.
 *
 * A standby writes the file in redo, before replay moves on, so a
 * restartpoint (the standby's checkpoint) covers the marks replayed before
 * it the same way, and so does a base backup taken from a standby.
 *
 * The lease credential
 * --------------------
 * With worker-id leases (lease.c), the same two places keep which lease
 * this server holds: SNOWFLAKE_LEASE_FILE holds its worker id and its
 * holder's secret token, and a WAL record carries them to standbys, whose
 * redo rewrites their file.  Nothing about uniqueness rests on it (the
 * registry's ceilings do that): it lets this server after a crash, or a
 * standby once promoted, prove to the registry that it follows the holder,
 * and so take the same worker id at once instead of waiting for the lease
 * to lapse.  It is written after each claim, a rare event.
 *
 * The resource manager id is SNOWFLAKE_RMGR_ID.  Every server that replays
 * our WAL (the primary after a crash, standbys, PITR restores) must preload
 * the library; without it, recovery stops at our first record.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <fcntl.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/fmgrprotos.h"
#include "utils/uuid.h"

#include "generator.h"
#include "mark.h"
#include "snowflake.h"

/*
 * Custom resource manager ids are 128..255 (128 is for development).  The
 * PostgreSQL wiki page "CustomWALResourceManagers" lists the taken ones,
 * handed out upwards from 129; 196 is far from those.  Changing it makes
 * existing WAL unreadable, so it is fixed for good.
 */
#define SNOWFLAKE_RMGR_ID			196
#define XLOG_SNOWFLAKE_MARK			0x00
#define XLOG_SNOWFLAKE_LEASE		0x10

#define SNOWFLAKE_MARK_TMP_FILE		SNOWFLAKE_MARK_FILE ".tmp"
#define SNOWFLAKE_LEASE_TMP_FILE	SNOWFLAKE_LEASE_FILE ".tmp"

typedef struct xl_snowflake_mark
{
	int64		mark_id;
} xl_snowflake_mark;

typedef struct xl_snowflake_lease
{
	int32		worker_id;
	pg_uuid_t	token;
} xl_snowflake_lease;

/*
 * Write "content" to the file "path" durably, through "tmppath": written,
 * fsynced, renamed into place, the directory fsynced.  Failure is an error at
 * "elevel": the caller must not go on as if the file were safe.
 */
static void
write_durably(const char *path, const char *tmppath, const char *content,
			  int elevel)
{
	int			len = strlen(content);
	int			fd;

	fd = OpenTransientFile(tmppath, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmppath)));
	errno = 0;
	if (write(fd, content, len) != len)
	{
		/* a short write without errno is most likely a full disk */
		if (errno == 0)
			errno = ENOSPC;
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmppath)));
	}
	if (pg_fsync(fd) != 0)
		ereport(data_sync_elevel(elevel),
				(errcode_for_file_access(),
				 errmsg("could not fsync file \"%s\": %m", tmppath)));
	if (CloseTransientFile(fd) != 0)
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", tmppath)));

	/*
	 * The temporary file is durable, so the rename only needs the directory
	 * synced after it (durable_rename would also sync both files again, which
	 * a call crossing the mark would wait for).
	 */
	if (rename(tmppath, path) != 0)
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not rename file \"%s\" to \"%s\": %m",
						tmppath, path)));
	(void) fsync_fname_ext(".", true, false, data_sync_elevel(elevel));
}

/* Write the mark file durably (see write_durably). */
static void
write_mark_file(int64 mark_id, int elevel)
{
	char		buf[32];

	snprintf(buf, sizeof(buf), INT64_FORMAT "\n", mark_id);
	write_durably(SNOWFLAKE_MARK_FILE, SNOWFLAKE_MARK_TMP_FILE, buf, elevel);
}

/* Write the lease file durably: the worker id and the token, on one line. */
static void
write_lease_file(int32 worker_id, const pg_uuid_t *token, int elevel)
{
	char	   *token_text = DatumGetCString(DirectFunctionCall1(uuid_out,
																 UUIDPGetDatum(token)));

	write_durably(SNOWFLAKE_LEASE_FILE, SNOWFLAKE_LEASE_TMP_FILE,
				  psprintf("%d %s\n", worker_id, token_text), elevel);
}

/*
 * Read the mark file into *mark_id (-1 if there is none yet).  Returns false
 * and logs why if it exists but cannot be read; the generator then refuses
 * to issue IDs rather than guess.  Runs in the postmaster.
 */
bool
sf_read_mark_file(int64 *mark_id)
{
	FILE	   *file;
	char		buf[32];
	char	   *end;
	bool		ok;

	*mark_id = -1;
	file = AllocateFile(SNOWFLAKE_MARK_FILE, PG_BINARY_R);
	if (file == NULL)
	{
		if (errno == ENOENT)
			return true;
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", SNOWFLAKE_MARK_FILE)));
		return false;
	}

	ok = fgets(buf, sizeof(buf), file) != NULL;
	if (ok)
	{
		errno = 0;
		*mark_id = strtoll(buf, &end, 10);
		ok = errno == 0 && end != buf && *end == '\n' && *mark_id >= 0;
	}
	FreeFile(file);

	if (!ok)
	{
		*mark_id = -1;
		ereport(LOG,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("snowflake mark file \"%s\" does not hold an ID",
						SNOWFLAKE_MARK_FILE)));
	}
	return ok;
}

/* Insert the WAL record of a new mark and flush it. */
static void
log_mark(int64 mark_id)
{
	xl_snowflake_mark xlrec;
	XLogRecPtr	lsn;

	xlrec.mark_id = mark_id;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	lsn = XLogInsert(SNOWFLAKE_RMGR_ID, XLOG_SNOWFLAKE_MARK);
	XLogFlush(lsn);
}

/*
 * Make a new mark durable: the file first, then the WAL record (see the
 * header for why in this order).  Returns only when both are durable;
 * raises an error otherwise, and then no ID may be handed out under the
 * mark.  Called by the one process the generator lets write a mark (a
 * backend, or the mark writer), with no lock held.
 */
void
sf_persist_mark(int64 mark_id)
{
	write_mark_file(mark_id, ERROR);
	log_mark(mark_id);
}

/*
 * Keep the lease this server now holds: the file, then a WAL record for the
 * standbys, flushed.  An error if the file cannot be written.
 */
void
sf_persist_lease(int32 worker_id, const pg_uuid_t *token)
{
	xl_snowflake_lease xlrec;
	XLogRecPtr	lsn;

	write_lease_file(worker_id, token, ERROR);

	xlrec.worker_id = worker_id;
	xlrec.token = *token;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	lsn = XLogInsert(SNOWFLAKE_RMGR_ID, XLOG_SNOWFLAKE_LEASE);
	XLogFlush(lsn);
}

/*
 * Read a UUID in the form uuid_out writes (8-4-4-4-12 hex digits) without
 * throwing; false if it is not one.
 */
static bool
read_uuid(const char *text, pg_uuid_t *uuid)
{
	int			i = 0;

	for (const char *p = text; *p != '\0'; p++)
	{
		int			hi;
		int			lo;

		if (*p == '-' && (i == 4 || i == 6 || i == 8 || i == 10))
			continue;
		if (i >= UUID_LEN || !isxdigit((unsigned char) p[0]) ||
			!isxdigit((unsigned char) p[1]))
			return false;
		hi = isdigit((unsigned char) p[0]) ? p[0] - '0' : pg_ascii_tolower(p[0]) - 'a' + 10;
		lo = isdigit((unsigned char) p[1]) ? p[1] - '0' : pg_ascii_tolower(p[1]) - 'a' + 10;
		uuid->data[i++] = (unsigned char) (hi << 4 | lo);
		p++;
	}
	return i == UUID_LEN;
}

/*
 * Read the lease file: false if there is none, or (logged) if it cannot be
 * read; it is only ever a hint to the registry, never trusted for more.
 */
bool
sf_read_lease_file(int32 *worker_id, pg_uuid_t *token)
{
	FILE	   *file;
	char		buf[128];
	char text[	64];
	bool		ok;

	file = AllocateFile(SNOWFLAKE_LEASE_FILE, PG_BINARY_R);
	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m",
							SNOWFLAKE_LEASE_FILE)));
		return false;
	}
	ok = fgets(buf, sizeof(buf), file) != NULL &&
		sscanf(buf, "%d %63s", worker_id, text) == 2 && *worker_id >= 0;
	FreeFile(file);
	if (ok)
		ok = read_uuid(text, token);
	if (!ok)
		ereport(LOG,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("snowflake lease file \"%s\" does not hold a worker id and a token; it is ignored",
						SNOWFLAKE_LEASE_FILE)));
	return ok;
}

static void
sf_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	xl_snowflake_mark *xlrec;

	if (info == XLOG_SNOWFLAKE_LEASE)
	{
		xl_snowflake_lease *lease = (xl_snowflake_lease *) XLogRecGetData(record);

		write_lease_file(lease->worker_id, &lease->token, ERROR);
		return;
	}
	if (info != XLOG_SNOWFLAKE_MARK)
		elog(PANIC, "sf_redo: unknown op code %u", info);

	/*
	 * The file holds at least the mark in shared memory (it is read at
	 * startup, every raise rewrites it, and it may be ahead of WAL), so a
	 * record at or below that mark has nothing to add; rewriting the file
	 * then could only lower it.
	 *
	 * If the file could not be read at startup, the mark in memory is -1 and
	 * replay rewrites the file with each higher mark it finds.  Marks are
	 * made in increasing order, and no ID is handed out before its mark's
	 * record is flushed, so the last record replayed covers every ID the
	 * replayed WAL can hold; a higher mark the unreadable file may have held
	 * covered no ID.  If no record is replayed, the file is left as it was.
	 * Either way generation refuses until the next restart reads the file
	 * again.
	 */
	xlrec = (xl_snowflake_mark *) XLogRecGetData(record);
	if (sf_raise_mark(xlrec->mark_id))
		write_mark_file(xlrec->mark_id, ERROR);
}

static void
sf_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_SNOWFLAKE_MARK)
	{
		xl_snowflake_mark *xlrec = (xl_snowflake_mark *) XLogRecGetData(record);

		appendStringInfo(buf, "mark " INT64_FORMAT, xlrec->mark_id);
	}
	else if (info == XLOG_SNOWFLAKE_LEASE)
	{
		xl_snowflake_lease *xlrec = (xl_snowflake_lease *) XLogRecGetData(record);

		/* the token is a secret: WAL dumps show only the worker id */
		appendStringInfo(buf, "lease of worker id %d", xlrec->worker_id);
	}
}

static const char *
sf_identify(uint8 info)
{
	if ((info & ~XLR_INFO_MASK) == XLOG_SNOWFLAKE_MARK)
		return "MARK";
	if ((info & ~XLR_INFO_MASK) == XLOG_SNOWFLAKE_LEASE)
		return "LEASE";
	return NULL;
}

static const RmgrData sf_rmgr = {
	.rm_name = "snowflake",
	.rm_redo = sf_redo,
	.rm_desc = sf_desc,
	.rm_identify = sf_identify,
};

/* Register the resource manager; called from _PG_init while preloading. */
void
sf_mark_init(void)
{
	RegisterCustomRmgr(SNOWFLAKE_RMGR_ID, (RmgrData *) &sf_rmgr);
}
