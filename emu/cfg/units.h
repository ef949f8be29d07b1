/* emu/cfg/units.h — numbers with units, as written in INI files and on the command line.
 *
 * Parsers take the whole text (no surrounding blanks), return 0 or -EINVAL and, on
 * error, write "PROBLEM; expected WHAT" into err (for messages like
 * "x.ini:7: net.latency: missing unit; expected a duration like 5ms (ns, us, ms, s)").
 * Formatters write the canonical form that the matching parser reads back to the very
 * same value (the round trip of `emu check` relies on it).  No allocation, no state.
 *
 *   duration  integer ns      5ms 1.5us 2s; netem spellings usec msec sec(s) too; a
 *                             bare number is an error ("missing unit")
 *   rate      double bit/s   10Gbit 100Mbit 0bit (SI: 1Kbit = 1000 bit/s, any case);
 *                             tc's *bps spellings mean BYTES per second there, so they
 *                             are refused with a hint instead of being guessed
 *   size      integer bytes   1500B 4KiB 1MiB 1GiB (binary multiples only)
 *   prob      double [0,1]    0.05 or 5%
 *   flops     double FLOP/s   10T 2.5G 1e13 (optional k M G T suffix, SI)
 */
#ifndef EMU_UNITS_H
#define EMU_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UNITS_BUF 64	/* enough for any formatted value */

int units_int(const char *s, int64_t *v, char *err, size_t errlen);
int units_uint(const char *s, uint64_t *v, char *err, size_t errlen);
int units_double(const char *s, double *v, char *err, size_t errlen);	/* finite only */
int units_bool(const char *s, bool *v, char *err, size_t errlen);	/* true/false yes/no on/off 1/0 */
int units_prob(const char *s, double *v, char *err, size_t errlen);	/* range left to caller */
int units_duration(const char *s, int64_t *ns, char *err, size_t errlen);
int units_rate(const char *s, double *bps, char *err, size_t errlen);
int units_size(const char *s, int64_t *bytes, char *err, size_t errlen);
int units_flops(const char *s, double *v, char *err, size_t errlen);

/* Shortest "%.Ng" that strtod reads back to exactly v. */
void units_fmt_double(double v, char *buf, size_t n);
void units_fmt_duration(int64_t ns, char *buf, size_t n);	/* largest exact unit */
void units_fmt_rate(double bps, char *buf, size_t n);
void units_fmt_size(int64_t bytes, char *buf, size_t n);
void units_fmt_flops(double v, char *buf, size_t n);

#endif
