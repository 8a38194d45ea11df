/*-------------------------------------------------------------------------
 *
 * base32.c
 *	  SQL: the text form of an ID (snowflake_encode, snowflake_decode).
 *
 * Crockford base32 in 13 uppercase characters: fixed width, and the
 * alphabet is in ASCII order, so that the text forms of IDs sort like the
 * IDs (in the C collation).  It does not depend on the layout (any 63-bit
 * value has one text form), so both functions are IMMUTABLE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"

#include "compat.h"
#include "layout.h"

PG_FUNCTION_INFO_V1(snowflake_encode);
PG_FUNCTION_INFO_V1(snowflake_decode);

/* The length of the text form. */
#define SNOWFLAKE_BASE32_LENGTH 13

/* What decoding found. */
typedef enum SnowflakeBase32Status
{
	SNOWFLAKE_BASE32_OK,
	SNOWFLAKE_BASE32_BAD_DIGIT, /* a character that is not a digit */
	SNOWFLAKE_BASE32_BAD_LENGTH,	/* not SNOWFLAKE_BASE32_LENGTH digits */
	SNOWFLAKE_BASE32_OUT_OF_RANGE	/* above 2^63 - 1 */
} SnowflakeBase32Status;

/*
 * Crockford's base32: the digits, then the letters without I, L, O and U.
 * The alphabet is in ASCII order, so fixed-width encodings sort like the
 * numbers they encode (in the C collation).  Sized by the string, NUL
 * included: a [32] array would drop the NUL, which GCC 15 warns about.
 */
static const char crockford_digits[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

StaticAssertDecl(sizeof(crockford_digits) == 32 + 1,
				 "crockford_digits holds 32 digits");

/*
 * The value of one digit, or -1 if c is not one.  Lowercase is accepted, and
 * so are Crockford's aliases: O for 0, I and L for 1.
 */
static int
digit_value(unsigned char c)
{
	const char *p;

	c = pg_ascii_toupper(c);
	if (c == 'O')
		return 0;
	if (c == 'I' || c == 'L')
		return 1;
	if (c == '\0' || (p = strchr(crockford_digits, c)) == NULL)
		return -1;
	return (int) (p - crockford_digits);
}

/*
 * Write a non-negative ID as SNOWFLAKE_BASE32_LENGTH uppercase digits and a
 * terminating NUL into buf.  Thirteen digits hold 65 bits, so the first digit
 * of a 63-bit value is 0 to 7.
 */
static void
base32_encode(int64 id, char *buf)
{
	uint64		value = (uint64) id;
	int			i;

	Assert(id >= 0);

	for (i = SNOWFLAKE_BASE32_LENGTH - 1; i >= 0; i--)
	{
		buf[i] = crockford_digits[value & 31];
		value >>= 5;
	}
	buf[SNOWFLAKE_BASE32_LENGTH] = '\0';
}

/*
 * Read len bytes of base32 into *result.  Checks, in this order, that every
 * byte is a digit (else sets *bad_offset to the first one that is not), that
 * there are exactly SNOWFLAKE_BASE32_LENGTH of them, and that the value fits
 * in 63 bits.  Never throws.
 */
static SnowflakeBase32Status
base32_decode(const char *str, int len, int64 *result, int *bad_offset)
{
	uint64		value = 0;
	int			i;

	for (i = 0; i < len; i++)
	{
		if (digit_value((unsigned char) str[i]) < 0)
		{
			*bad_offset = i;
			return SNOWFLAKE_BASE32_BAD_DIGIT;
		}
	}
	if (len != SNOWFLAKE_BASE32_LENGTH)
		return SNOWFLAKE_BASE32_BAD_LENGTH;

	/* 13 digits are 65 bits: the first must leave the top two bits clear */
	if (digit_value((unsigned char) str[0]) > 7)
		return SNOWFLAKE_BASE32_OUT_OF_RANGE;

	for (i = 0; i < len; i++)
		value = (value << 5) | (uint64) digit_value((unsigned char) str[i]);

	*result = (int64) value;
	return SNOWFLAKE_BASE32_OK;
}

Datum
snowflake_encode(PG_FUNCTION_ARGS)
{
	int64		id = sf_check_id(PG_GETARG_INT64(0));
	char		buf[SNOWFLAKE_BASE32_LENGTH + 1];

	base32_encode(id, buf);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(buf, SNOWFLAKE_BASE32_LENGTH));
}

/*
 * The input of snowflake_decode as error messages show it: cut after a few
 * characters (at a character boundary), so a long input cannot flood the log.
 */
static char *
shown_input(const char *str, int len)
{
	int			shown = pg_mbcliplen(str, len, 2 * SNOWFLAKE_BASE32_LENGTH);

	return psprintf("%.*s%s", shown, str, shown < len ? "..." : "");
}

Datum
snowflake_decode(PG_FUNCTION_ARGS)
{
	text	   *txt = PG_GETARG_TEXT_PP(0);
	const char *str = VARDATA_ANY(txt);
	int			len = VARSIZE_ANY_EXHDR(txt);
	int64		result = 0;
	int			bad = 0;

	switch (base32_decode(str, len, &result, &bad))
	{
		case SNOWFLAKE_BASE32_OK:
			break;

		case SNOWFLAKE_BASE32_BAD_DIGIT:

			/*
			 * bytes before the bad one are ASCII digits, so it starts a
			 * character
			 */
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid snowflake text ID: \"%s\"",
							shown_input(str, len)),
					 errdetail("Character %d, \"%.*s\", is not a Crockford base32 digit.",
							   bad + 1, pg_mblen(str + bad), str + bad),
					 errhint("The digits are 0-9 and the letters A-Z except U, in either case; O is read as 0, and I and L as 1.")));
			break;

		case SNOWFLAKE_BASE32_BAD_LENGTH:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid snowflake text ID: \"%s\"",
							shown_input(str, len)),
					 errdetail("It has %d characters; a snowflake text ID has exactly %d.",
							   len, SNOWFLAKE_BASE32_LENGTH)));
			break;

		case SNOWFLAKE_BASE32_OUT_OF_RANGE:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("snowflake text ID \"%s\" is out of range for type bigint",
							shown_input(str, len)),
					 errdetail("Its value is above 9223372036854775807 (2^63 - 1); the first character of a snowflake text ID is 0 to 7.")));
			break;
	}
	PG_RETURN_INT64(result);
}
