/*-------------------------------------------------------------------------
 *
 * base32.c
 *	  Crockford base32, the fixed-width text form of an ID.
 *
 * Thirteen digits from an alphabet in ASCII order, so that the text forms
 * of IDs sort like the IDs (in the C collation).  It does not depend on the
 * layout: any 63-bit value has one text form.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "snowflake.h"

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
void
sf_base32_encode(int64 id, char *buf)
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
SnowflakeBase32Status
sf_base32_decode(const char *str, int len, int64 *result, int *bad_offset)
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
