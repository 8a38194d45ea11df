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
 * The resource manager id is SNOWFLAKE_RMGR_ID.  Every server that replays
 * our WAL (the primary after a crash, standbys, PITR restores) must preload
 * the library; without it, recovery stops at our first record.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/fd.h"

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

#define SNOWFLAKE_MARK_TMP_FILE		SNOWFLAKE_MARK_FILE ".tmp"

typedef struct xl_snowflake_mark
{
	int64		mark_id;
} xl_snowflake_mark;

/*
 * Write the mark file durably.  Failure is an error at "elevel": the caller
 * must not go on as if the mark were safe.
 */
static void
write_mark_file(int64 mark_id, int elevel)
{
	char		buf[32];
	int			len;
	int			fd;

	len = snprintf(buf, sizeof(buf), INT64_FORMAT "\n", mark_id);

	fd = OpenTransientFile(SNOWFLAKE_MARK_TMP_FILE,
						   O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m",
						SNOWFLAKE_MARK_TMP_FILE)));
	errno = 0;
	if (write(fd, buf, len) != len)
	{
		/* a short write without errno is most likely a full disk */
		if (errno == 0)
			errno = ENOSPC;
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m",
						SNOWFLAKE_MARK_TMP_FILE)));
	}
	if (pg_fsync(fd) != 0)
		ereport(data_sync_elevel(elevel),
				(errcode_for_file_access(),
				 errmsg("could not fsync file \"%s\": %m",
						SNOWFLAKE_MARK_TMP_FILE)));
	if (CloseTransientFile(fd) != 0)
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m",
						SNOWFLAKE_MARK_TMP_FILE)));

	/*
	 * The temporary file is durable, so the rename only needs the directory
	 * synced after it (durable_rename would also sync both files again, which
	 * a call crossing the mark would wait for).
	 */
	if (rename(SNOWFLAKE_MARK_TMP_FILE, SNOWFLAKE_MARK_FILE) != 0)
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not rename file \"%s\" to \"%s\": %m",
						SNOWFLAKE_MARK_TMP_FILE, SNOWFLAKE_MARK_FILE)));
	(void) fsync_fname_ext(".", true, false, data_sync_elevel(elevel));
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

static void
sf_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	xl_snowflake_mark *xlrec;

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
}

static const char *
sf_identify(uint8 info)
{
	if ((info & ~XLR_INFO_MASK) == XLOG_SNOWFLAKE_MARK)
		return "MARK";
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
