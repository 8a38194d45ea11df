/*-------------------------------------------------------------------------
 *
 * mark_stall.c
 *	  A test-only LD_PRELOAD shim that holds the server inside two windows
 *	  around the persisted mark, so that a TAP test can act there.
 *
 * Built by the TAP tests with the system C compiler and preloaded into the
 * server they start (SnowflakeTest.pm, start_with_mark_stall); never part of
 * the extension.  It is steered by files in the directory named by the
 * environment variable SNOWFLAKE_STALL_DIR:
 *
 *	rename			while it exists, rename() of the new mark file
 *					("snowflake.mark.tmp") waits before renaming; it creates
 *					"rename.stalled" while it waits.  This stalls a mark write
 *					between writing the new mark and installing it.
 *	rename.delay	while it exists, every rename() of the new mark file
 *					first sleeps for the number of milliseconds it holds, like
 *					slow storage would.
 *	rename.fail		the first rename() of the new mark file that finds it
 *					removes it and fails with EIO, without renaming.
 *	rename.exit		the first rename() of the new mark file that finds it
 *					removes it and ends the process with the server's
 *					proc_exit(1), as a FATAL error would.
 *	copy			while it exists, open() of "snowflake.mark" for reading
 *					(a base backup copying the data directory) opens the file,
 *					then waits before returning; it creates "copy.stalled"
 *					while it waits.  The copy then reads the file as it was
 *					when it was opened, whatever is renamed over it meanwhile.
 *
 * "rename", "rename.fail" and "rename.exit" may hold a piece of text: then
 * only a process whose title (which PostgreSQL writes over its command line,
 * /proc/self/cmdline) contains it is held, fails or exits, so that a test
 * can aim at a backend running an INSERT rather than the background mark
 * writer, whose writes it cannot time.  Empty, they act on any process.
 *
 * Without SNOWFLAKE_STALL_DIR, or without these files, every call goes
 * straight through.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*rename_fn) (const char *, const char *);
typedef void (*proc_exit_fn) (int);
typedef int (*open_fn) (const char *, int,...);

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The path of control file "name", or NULL without SNOWFLAKE_STALL_DIR. */
static const char *
control_path(const char *name, char *buf, size_t size)
{
	const char *dir = getenv("SNOWFLAKE_STALL_DIR");

	if (dir == NULL || dir[0] == '\0')
		return NULL;
	snprintf(buf, size, "%s/%s", dir, name);
	return buf;
}

static int
control_exists(const char *name)
{
	char		buf[4096];
	const char *path = control_path(name, buf, sizeof(buf));

	return path != NULL && access(path, F_OK) == 0;
}

/*
 * Whether control file "name" exists and aims at this process: it is empty,
 * or this process's title contains the text it holds (see the header).
 */
static int
control_aims_here(const char *name)
{
	char		buf[4096];
	char		text[256];
	char		title[4096];
	const char *path = control_path(name, buf, sizeof(buf));
	FILE	   *file;
	size_t		len;
	size_t		i;

	if (path == NULL || (file = fopen(path, "r")) == NULL)
		return 0;
	len = fread(text, 1, sizeof(text) - 1, file);
	fclose(file);
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	text[len] = '\0';
	if (len == 0)
		return 1;

	if ((file = fopen("/proc/self/cmdline", "r")) == NULL)
		return 0;
	len = fread(title, 1, sizeof(title) - 1, file);
	fclose(file);
	for (i = 0; i < len; i++)
		if (title[i] == '\0')
			title[i] = ' ';
	title[len] = '\0';
	return strstr(title, text) != NULL;
}

/* Wait while control file "name" exists, announcing it in "name.stalled". */
static void
stall_while(const char *name)
{
	char		flag[4096];
	char		signal_name[256];
	int			saved_errno = errno;
	int			fd;

	if (!control_aims_here(name))
		return;

	snprintf(signal_name, sizeof(signal_name), "%s.stalled", name);
	if (control_path(signal_name, flag, sizeof(flag)) == NULL)
		return;
	fd = creat(flag, 0600);
	if (fd >= 0)
		close(fd);
	while (control_exists(name))
		usleep(10000);
	unlink(flag);
	errno = saved_errno;
}

/* The whole number that control file "name" holds, 0 if none. */
static long
control_number(const char *name)
{
	char		buf[4096];
	const char *path = control_path(name, buf, sizeof(buf));
	FILE	   *file;
	long		value = 0;

	if (path == NULL || (file = fopen(path, "r")) == NULL)
		return 0;
	if (fscanf(file, "%ld", &value) != 1)
		value = 0;
	fclose(file);
	return value;
}

/*
 * Whether to fail this call: true once per creation of "name", in a process
 * it aims at.
 */
static int
fail_once(const char *name)
{
	char		buf[4096];
	const char *path = control_path(name, buf, sizeof(buf));

	return path != NULL && control_aims_here(name) && unlink(path) == 0;
}

int
rename(const char *oldpath, const char *newpath)
{
	static rename_fn real_rename = NULL;

	if (real_rename == NULL)
		real_rename = (rename_fn) dlsym(RTLD_NEXT, "rename");

	if (strcmp(base_name(oldpath), "snowflake.mark.tmp") == 0)
	{
		int			saved_errno = errno;
		long		delay_ms = control_number("rename.delay");

		if (delay_ms > 0)
			usleep((useconds_t) delay_ms * 1000);
		errno = saved_errno;
		stall_while("rename");
		if (fail_once("rename.fail"))
		{
			errno = EIO;
			return -1;
		}
		if (fail_once("rename.exit"))
		{
			proc_exit_fn proc_exit = (proc_exit_fn) dlsym(RTLD_DEFAULT, "proc_exit");

			if (proc_exit != NULL)
				proc_exit(1);
		}
	}
	return real_rename(oldpath, newpath);
}

static int
open_common(const char *symbol, const char *path, int flags, mode_t mode)
{
	open_fn		real_open = (open_fn) dlsym(RTLD_NEXT, symbol);
	int			fd = real_open(path, flags, mode);

	if (fd >= 0 && (flags & O_ACCMODE) == O_RDONLY &&
		strcmp(base_name(path), "snowflake.mark") == 0)
		stall_while("copy");
	return fd;
}

int
open(const char *path, int flags,...)
{
	mode_t		mode = 0;

	if (flags & (O_CREAT | O_TMPFILE))
	{
		va_list		ap;

		va_start(ap, flags);
		mode = (mode_t) va_arg(ap, int);
		va_end(ap);
	}
	return open_common("open", path, flags, mode);
}

int
open64(const char *path, int flags,...)
{
	mode_t		mode = 0;

	if (flags & (O_CREAT | O_TMPFILE))
	{
		va_list		ap;

		va_start(ap, flags);
		mode = (mode_t) va_arg(ap, int);
		va_end(ap);
	}
	return open_common("open64", path, flags, mode);
}
