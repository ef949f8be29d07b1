/* emu/cfg/cfg_keys.c — the key table as data, and parsing/formatting of one value. */
#include "emu/cfg/cfg_keys.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/cfg/units.h"
#include "nn/backend.h"

const char *const cfg_bool_names[] = { "false", "true", NULL };
#define CFG_MAX_DEVICES 16
const char *cfg_device_names[CFG_MAX_DEVICES + 2];
/* The registry is constant data, so its names can be copied before main, before any
 * configuration is parsed; backends past CFG_MAX_DEVICES are not offered. */
__attribute__((constructor)) static void device_names_init(void)
{
	const char *const *known = nn_backend_known();
	size_t n = 0;

	for (; known[n] && n < CFG_MAX_DEVICES; n++)
		cfg_device_names[n] = known[n];
	cfg_device_names[n] = "auto";
}
const char *const cfg_notify_names[] = { [NOTIFY_AUTO] = "auto",
	[NOTIFY_IO_URING] = "io_uring", [NOTIFY_FUTEX] = "futex", NULL };
const char *const cfg_compute_names[] = { [COMPUTE_FLOPS] = "flops",
	[COMPUTE_MEASURED] = "measured", NULL };
const char *const cfg_loss_names[] = { [LOSS_NONE] = "none", [LOSS_BERNOULLI] = "bernoulli",
	[LOSS_GILBERT] = "gilbert", [LOSS_STATE] = "state", NULL };
const char *const cfg_unit_names[] = { [UNIT_MESSAGE] = "message", [UNIT_PACKET] = "packet",
	NULL };
const char *const cfg_dist_names[] = { [DIST_UNIFORM] = "uniform", [DIST_NORMAL] = "normal",
	[DIST_PARETO] = "pareto", [DIST_PARETONORMAL] = "paretonormal",
	[DIST_EXPERIMENTAL] = "experimental", [DIST_TABLE] = "table", NULL };
/* the compute jitter and the slot have no table file key: the same names but table */
const char *const cfg_compute_dist_names[] = { [DIST_UNIFORM] = "uniform",
	[DIST_NORMAL] = "normal", [DIST_PARETO] = "pareto", [DIST_PARETONORMAL] = "paretonormal",
	[DIST_EXPERIMENTAL] = "experimental", NULL };
const char *const cfg_corrupt_detect_names[] = { [CORRUPT_DETECT_NONE] = "none",
	[CORRUPT_DETECT_CHECKSUM] = "checksum", NULL };
const char *const cfg_transport_names[] = { [TRANSPORT_UNRELIABLE] = "unreliable",
	[TRANSPORT_RELIABLE] = "reliable", [TRANSPORT_TCP] = "tcp", NULL };
const char *const cfg_cc_names[] = { [CC_NEWRENO] = "newreno", [CC_DCTCP] = "dctcp", NULL };
const char *const cfg_algo_names[] = { [ALGO_RPS] = "rps", [ALGO_ALLREDUCE] = "allreduce",
	[ALGO_SIGNUM] = "signum", [ALGO_JOINTSPAR] = "jointspar",
	[ALGO_JOINTSPAR_LARS] = "jointspar-lars", [ALGO_DPSGD] = "dpsgd",
	[ALGO_LOCALSGD] = "localsgd", [ALGO_TOPK] = "topk",
	[ALGO_QSGD] = "qsgd", [ALGO_HADAMARD] = "hadamard", [ALGO_PLUGIN] = "plugin",
	[ALGO_RING] = "ring", NULL };
const char *const cfg_graph_names[] = { [GRAPH_RING] = "ring", [GRAPH_TORUS] = "torus",
	[GRAPH_EXPONENTIAL] = "exponential", NULL };
const char *const cfg_block_map_names[] = { [BLOCKS_FIXED] = "fixed",
	[BLOCKS_RANDOM] = "random", NULL };
const char *const cfg_on_miss_names[] = { [MISS_OWN] = "own", [MISS_ZERO] = "zero", NULL };
const char *const cfg_adversary_names[] = { [ADV_INVERT] = "invert", [ADV_RANDOM] = "random",
	NULL };
const char *const cfg_draws_names[] = { [DRAWS_SHARED] = "shared",
	[DRAWS_INDEPENDENT] = "independent", NULL };
const char *const cfg_shape_names[] = { [SHAPE_NONE] = "none", [SHAPE_SWITCH] = "switch",
	[SHAPE_HOSTS] = "hosts", NULL };
const char *const cfg_dataset_names[] = { [DATA_FASHION_MNIST] = "fashion-mnist",
	[DATA_CIFAR10] = "cifar10", [DATA_TEXT] = "text", [DATA_GAUSSIAN] = "gaussian",
	[DATA_LINREG] = "linreg", NULL };
const char *const cfg_shard_names[] = { [SHARD_IID] = "iid", [SHARD_LABEL] = "label",
	[SHARD_DIRICHLET] = "dirichlet", NULL };
const char *const cfg_lr_scaling_names[] = { [LR_SCALE_NONE] = "none",
	[LR_SCALE_LINEAR] = "linear", [LR_SCALE_SQRT] = "sqrt", NULL };
const char *const cfg_optimizer_names[] = { [OPTIM_SGD] = "sgd", [OPTIM_ADAM] = "adam",
	[OPTIM_ADAMW] = "adamw", [OPTIM_LAMB] = "lamb",
	[OPTIM_LARS] = "lars", NULL };
const char *const cfg_lr_schedule_names[] = { [LR_STEP] = "step", [LR_COSINE] = "cosine",
	[LR_LINEAR] = "linear", [LR_POLY] = "poly", [LR_ONECYCLE] = "onecycle", NULL };
const char *const cfg_model_names[] = { "mlp", "lenet", "resnet20", "resnet32", "resnet44",
	"resnet56", "resnet110", "lstm", "logreg", "linreg", "custom", NULL };

#define SECTION_NAME(id, name, shown, intro) name,
#define SECTION_SHOWN(id, name, shown, intro) shown,
#define SECTION_INTRO(id, name, shown, intro) intro,
const char *const cfg_sections[CFG_NSECTIONS + 1] = { CFG_SECTIONS(SECTION_NAME) NULL };
const char *const cfg_section_shown[CFG_NSECTIONS] = { CFG_SECTIONS(SECTION_SHOWN) };
const char *const cfg_section_intro[CFG_NSECTIONS] = { CFG_SECTIONS(SECTION_INTRO) };
#undef SECTION_NAME
#undef SECTION_SHOWN
#undef SECTION_INTRO

void cfg_section_list(const char *last, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = 0;
	for (int s = 0; s < CFG_NSECTIONS && len < n; s++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", !s ? "" :
					s == CFG_NSECTIONS - 1 ? last : ", ", cfg_section_shown[s]);
}

int cfg_section_index(const char *name)
{
	for (int s = 0; s < CFG_NSECTIONS; s++)
		if (!strcmp(cfg_sections[s], name))
			return s;
	return -1;
}

#define OFF_net(s, f) offsetof(struct net_cfg, f)
#define OFF_run(s, f) offsetof(struct cfg, s.f)
#define OFF_train OFF_run
#define OFF_data OFF_run
#define OFF_rps OFF_run
#define OFF_allreduce OFF_run
#define OFF_signum OFF_run
#define OFF_jointspar OFF_run
#define OFF_dpsgd OFF_run
#define OFF_localsgd OFF_run
#define OFF_topk OFF_run
#define OFF_qsgd OFF_run
#define OFF_hadamard OFF_run
#define OFF_ring OFF_run
#define OFF_topology OFF_run
/* a worker key's name is not its field's: compute_jitter is the model's jitter */
#define WF_slowdown slowdown
#define WF_compute_jitter jitter
#define WF_compute_jitter_distribution jitter_dist
#define OFF_worker(s, f) offsetof(struct cfg_worker_model, WF_##f)
#define SIZE_net(s, f) sizeof(((struct net_cfg *)0)->f)
#define SIZE_worker(s, f) sizeof(((struct cfg_worker_model *)0)->WF_##f)
#define SIZE_run(s, f) sizeof(((struct cfg *)0)->s.f)
#define SIZE_train SIZE_run
#define SIZE_data SIZE_run
#define SIZE_rps SIZE_run
#define SIZE_allreduce SIZE_run
#define SIZE_signum SIZE_run
#define SIZE_jointspar SIZE_run
#define SIZE_dpsgd SIZE_run
#define SIZE_localsgd SIZE_run
#define SIZE_topk SIZE_run
#define SIZE_qsgd SIZE_run
#define SIZE_hadamard SIZE_run
#define SIZE_ring SIZE_run
#define SIZE_topology SIZE_run
#define EXTRA_INT(s, x)
#define EXTRA_I64(s, x)
#define EXTRA_U64(s, x)
#define EXTRA_DOUBLE(s, x)
#define EXTRA_PROB(s, x)
#define EXTRA_DURATION(s, x)
#define EXTRA_RATE(s, x)
#define EXTRA_SIZE(s, x)
#define EXTRA_FLOPS(s, x)
#define EXTRA_STR(s, x)
#define EXTRA_CHOICE(s, x) .names = x,
#define EXTRA_ENUM(s, x) .names = x,
#define EXTRA_LIST(s, x) .count_off = offsetof(struct cfg, s.x),

#define KEY(s, f, t, x, d, l, h, fl, hl) { \
	.section = #s, .name = #f, .type = CFG_T_##t, \
	.off = OFF_##s(s, f), .size = SIZE_##s(s, f), EXTRA_##t(s, x) \
	.def = d, .lo = l, .hi = h, .flags = fl, .help = hl },
const struct cfg_key cfg_keys[] = { CFG_KEYS(KEY) };
#undef KEY
const size_t cfg_nkeys = sizeof(cfg_keys) / sizeof(cfg_keys[0]);

_Static_assert(CFG_NNET <= 64, "struct cfg_link.set has 64 bits");
_Static_assert(CFG_NWORKERK <= 32, "struct cfg_worker_section.set has 32 bits");
_Static_assert(CFG_NKEYS <= CFG_KEY_SLOTS, "struct cfg.key_loc has CFG_KEY_SLOTS");

const struct cfg_key *cfg_key_find(const char *section, const char *name)
{
	if (!strcmp(section, "link"))
		section = "net";
	for (size_t i = 0; i < cfg_nkeys; i++)
		if (!strcmp(cfg_keys[i].section, section) && !strcmp(cfg_keys[i].name, name))
			return &cfg_keys[i];
	return NULL;
}

void cfg_join_names(const char *const *names, size_t count, const char *sep, char *buf,
		    size_t n)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < count && names[i] && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? sep : "", names[i]);
}

void cfg_key_fmt_bound(const struct cfg_key *k, double v, char *buf, size_t n)
{
	switch (k->type) {
	case CFG_T_DURATION: units_fmt_duration((int64_t)v, buf, n); break;
	case CFG_T_SIZE: units_fmt_size((int64_t)v, buf, n); break;
	case CFG_T_RATE: units_fmt_rate(v, buf, n); break;
	case CFG_T_FLOPS: units_fmt_flops(v, buf, n); break;
	default: units_fmt_double(v, buf, n);
	}
}

void cfg_key_range_text(const struct cfg_key *k, char *buf, size_t n)
{
	char lo[UNITS_BUF], hi[UNITS_BUF], z[UNITS_BUF] = "";

	buf[0] = 0;
	if (k->names) {
		cfg_join_names(k->names, SIZE_MAX, " ", buf, n);
		return;
	}
	if (!(k->lo < k->hi))
		return;
	if (k->type == CFG_T_STR) {
		snprintf(buf, n, "%s%.0f characters", k->lo > 0 ? "1 to " : "up to ", k->hi);
		return;
	}
	cfg_key_fmt_bound(k, k->lo, lo, sizeof(lo));
	cfg_key_fmt_bound(k, k->hi, hi, sizeof(hi));
	if (k->flags & CFG_OR_ZERO)
		cfg_key_fmt_bound(k, 0, z, sizeof(z));
	snprintf(buf, n, "%c%s, %s%c%s%s%s", (k->flags & CFG_GT_LO) ? '(' : '[', lo, hi,
		 (k->flags & CFG_LT_HI) ? ')' : ']', (k->flags & CFG_POW2) ? ", power of 2" : "",
		 *z ? ", or " : "", z);
}

/* Whether v (the double) or iv (a whole type's exact value; NULL for the others) is
 * outside the key's range.  A whole value is compared as an integer: above 2^53 ns a
 * double would round 1ns past the bound onto it. */
static bool out_of_range(const struct cfg_key *k, double v, const int64_t *iv)
{
	if (iv) {
		int64_t lo = (int64_t)k->lo, hi = (int64_t)k->hi;	/* whole in the table */

		return *iv < lo || *iv > hi || ((k->flags & CFG_GT_LO) && *iv == lo) ||
		       ((k->flags & CFG_LT_HI) && *iv == hi);
	}
	return v < k->lo || v > k->hi || ((k->flags & CFG_GT_LO) && v == k->lo) ||
	       ((k->flags & CFG_LT_HI) && v == k->hi);
}

static int check_range(const struct cfg_key *k, double v, const int64_t *iv, const char *text,
		       char *err, size_t errlen)
{
	char lo[UNITS_BUF], hi[UNITS_BUF], z[UNITS_BUF], zero[UNITS_BUF + 8] = "";

	if (!(k->lo < k->hi) || ((k->flags & CFG_OR_ZERO) && v == 0))
		return 0;
	if (!out_of_range(k, v, iv))
		return 0;
	cfg_key_fmt_bound(k, k->lo, lo, sizeof(lo));
	cfg_key_fmt_bound(k, k->hi, hi, sizeof(hi));
	if (k->flags & CFG_OR_ZERO) {
		cfg_key_fmt_bound(k, 0, z, sizeof(z));
		snprintf(zero, sizeof(zero), ", or %s", z);
	}
	snprintf(err, errlen, "%s is out of range; expected %s %s and %s %s%s%s", text,
		 (k->flags & CFG_GT_LO) ? "more than" : "at least", lo,
		 (k->flags & CFG_LT_HI) ? "less than" : "at most", hi,
		 (k->flags & CFG_POW2) ? ", a power of two" : "",
		 zero);
	return -EINVAL;
}

static int parse_choice(const struct cfg_key *k, const char *text, int *idx, char *err,
			size_t errlen)
{
	char all[512];
	size_t cnt = 0;

	for (; k->names[cnt]; cnt++) {
		if (!strcmp(k->names[cnt], text)) {
			*idx = (int)cnt;
			return 0;
		}
	}
	cfg_join_names(k->names, SIZE_MAX, ", ", all, sizeof(all));
	if (!*text)
		snprintf(err, errlen, "missing value; expected one of %s", all);
	else
		snprintf(err, errlen, "unknown value '%s'; expected one of %s", text, all);
	return -EINVAL;
}

static int parse_list(const struct cfg_key *k, char *base, const char *text, char *err,
		      size_t errlen)
{
	size_t cap = k->size / sizeof(double), cnt = 0;
	double *v = (double *)(base + k->off);
	char item[UNITS_BUF + 1];
	const char *p = text, *e;

	while (*p == ' ' || *p == '\t')
		p++;
	while (*p) {
		size_t len;

		e = strchr(p, ',');
		len = e ? (size_t)(e - p) : strlen(p);
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (cnt == cap) {
			snprintf(err, errlen, "more than %zu values; expected at most %zu, comma "
				 "separated", cap, cap);
			return -EINVAL;
		}
		if (len > UNITS_BUF) {
			snprintf(err, errlen, "value %zu is too long; expected numbers, comma "
				 "separated", cnt + 1);
			return -EINVAL;
		}
		memcpy(item, p, len);
		item[len] = 0;
		if (units_double(item, &v[cnt], err, errlen) ||
		    check_range(k, v[cnt], NULL, item, err, errlen))
			return -EINVAL;
		if ((k->flags & CFG_ASCENDING) && cnt > 0 && !(v[cnt] > v[cnt - 1])) {
			snprintf(err, errlen, "%s does not follow %.17g; expected increasing "
				 "numbers", item, v[cnt - 1]);
			return -EINVAL;
		}
		cnt++;
		if (!e)
			break;
		p = e + 1;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p) {
			snprintf(err, errlen, "trailing comma; expected numbers, comma separated");
			return -EINVAL;
		}
	}
	*(int *)(base + k->count_off) = (int)cnt;
	return 0;
}

static int parse_str(const struct cfg_key *k, char *dst, const char *text, char *err,
		     size_t errlen)
{
	size_t len = strlen(text);

	/* "" is how an empty (or blank-edged) string is written; see cfg_key_format */
	if (len >= 2 && text[0] == '"' && text[len - 1] == '"') {
		text++;
		len -= 2;
	}
	/* inih cuts values at " ;" and the reader at " #", whatever the quotes */
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)text[i] < 0x20 || text[i] == ';' || text[i] == '#') {
			snprintf(err, errlen, "'%c' in a string; expected text without control "
				 "characters, ';' or '#'", (unsigned char)text[i] < 0x20 ? '?' : text[i]);
			return -EINVAL;
		}
	}
	if (len < (size_t)k->lo) {
		snprintf(err, errlen, "empty value; expected a non-empty string");
		return -EINVAL;
	}
	if (len > (size_t)k->hi || len >= k->size) {
		snprintf(err, errlen, "string of %zu characters is too long; expected at most %.0f",
			 len, k->hi);
		return -EINVAL;
	}
	memcpy(dst, text, len);
	dst[len] = 0;
	return 0;
}

int cfg_key_parse(const struct cfg_key *k, void *base_, const char *text, char *err,
		  size_t errlen)
{
	char *base = base_, *dst = base + k->off;
	int64_t i64 = 0;
	double d;
	int idx, r;
	bool whole;

	switch (k->type) {
	case CFG_T_INT:
	case CFG_T_I64:
		r = units_int(text, &i64, err, errlen);
		d = (double)i64;
		break;
	case CFG_T_U64:
		return units_uint(text, (uint64_t *)dst, err, errlen);
	case CFG_T_DOUBLE:
		r = units_double(text, &d, err, errlen);
		break;
	case CFG_T_PROB:
		r = units_prob(text, &d, err, errlen);
		break;
	case CFG_T_DURATION:
		r = units_duration(text, &i64, err, errlen);
		d = (double)i64;
		break;
	case CFG_T_SIZE:
		r = units_size(text, &i64, err, errlen);
		d = (double)i64;
		break;
	case CFG_T_RATE:
		r = units_rate(text, &d, err, errlen);
		break;
	case CFG_T_FLOPS:
		r = units_flops(text, &d, err, errlen);
		break;
	case CFG_T_STR:
		return parse_str(k, dst, text, err, errlen);
	case CFG_T_CHOICE:
		if (parse_choice(k, text, &idx, err, errlen))
			return -EINVAL;
		snprintf(dst, k->size, "%s", k->names[idx]);
		return 0;
	case CFG_T_ENUM:
		if (parse_choice(k, text, &idx, err, errlen))
			return -EINVAL;
		*(int *)dst = idx;
		return 0;
	case CFG_T_LIST:
		return parse_list(k, base, text, err, errlen);
	default:
		return -EINVAL;
	}
	if (r)
		return -EINVAL;
	whole = k->type == CFG_T_INT || k->type == CFG_T_I64 || k->type == CFG_T_DURATION ||
		k->type == CFG_T_SIZE;
	if (check_range(k, d, whole ? &i64 : NULL, text, err, errlen))
		return -EINVAL;
	if ((k->flags & CFG_POW2) && (i64 & (i64 - 1))) {
		snprintf(err, errlen, "%s is not a power of two; expected a power of two", text);
		return -EINVAL;
	}
	switch (k->type) {
	case CFG_T_INT:
		*(int *)dst = (int)i64;
		break;
	case CFG_T_I64:
	case CFG_T_DURATION:
	case CFG_T_SIZE:
		*(int64_t *)dst = i64;
		break;
	default:
		*(double *)dst = d;
	}
	return 0;
}

void cfg_key_format(const struct cfg_key *k, const void *base_, char *buf, size_t n)
{
	const char *base = base_, *src = base + k->off;
	size_t len = 0;

	switch (k->type) {
	case CFG_T_INT:
		snprintf(buf, n, "%d", *(const int *)src);
		break;
	case CFG_T_I64:
		snprintf(buf, n, "%" PRId64, *(const int64_t *)src);
		break;
	case CFG_T_U64:
		snprintf(buf, n, "%" PRIu64, *(const uint64_t *)src);
		break;
	case CFG_T_DOUBLE:
	case CFG_T_PROB:
		units_fmt_double(*(const double *)src, buf, n);
		break;
	case CFG_T_DURATION:
		units_fmt_duration(*(const int64_t *)src, buf, n);
		break;
	case CFG_T_SIZE:
		units_fmt_size(*(const int64_t *)src, buf, n);
		break;
	case CFG_T_RATE:
		units_fmt_rate(*(const double *)src, buf, n);
		break;
	case CFG_T_FLOPS:
		units_fmt_flops(*(const double *)src, buf, n);
		break;
	case CFG_T_STR:
	case CFG_T_CHOICE:
		len = strlen(src);
		/* quote what inih would otherwise strip or parse_str unquote */
		if (!len || src[0] == ' ' || src[len - 1] == ' ' || src[0] == '"')
			snprintf(buf, n, "\"%s\"", src);
		else
			snprintf(buf, n, "%s", src);
		break;
	case CFG_T_ENUM:
		snprintf(buf, n, "%s", k->names[*(const int *)src]);
		break;
	case CFG_T_LIST: {
		const double *v = (const double *)src;
		int cnt = *(const int *)(base + k->count_off);

		buf[0] = 0;
		for (int i = 0; i < cnt && len + 2 < n; i++) {
			if (i)
				buf[len++] = ',', buf[len] = 0;
			units_fmt_double(v[i], buf + len, n - len);
			len = strlen(buf);
		}
		break;
	}
	}
}

const char *cfg_type_name(enum cfg_type t)
{
	static const char *const names[] = {
		[CFG_T_INT] = "int", [CFG_T_I64] = "int", [CFG_T_U64] = "uint64",
		[CFG_T_DOUBLE] = "number", [CFG_T_PROB] = "probability",
		[CFG_T_DURATION] = "duration", [CFG_T_RATE] = "rate", [CFG_T_SIZE] = "size",
		[CFG_T_FLOPS] = "flops", [CFG_T_STR] = "string", [CFG_T_CHOICE] = "choice",
		[CFG_T_ENUM] = "choice", [CFG_T_LIST] = "list",
	};
	return names[t];
}

const char *cfg_type_unit(enum cfg_type t)
{
	switch (t) {
	case CFG_T_PROB: return "0.05 or 5%";
	case CFG_T_DURATION: return "ns us ms s";
	case CFG_T_RATE: return "bit Kbit Mbit Gbit Tbit (per s)";
	case CFG_T_SIZE: return "B KiB MiB GiB";
	case CFG_T_FLOPS: return "FLOP/s, suffix k M G T";
	case CFG_T_LIST: return "numbers, comma separated";
	default: return "";
	}
}

/* Optimal string alignment distance: a swap of neighbours counts as one edit. */
static size_t edits(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[33][33];

	if (la > 32 || lb > 32)
		return 99;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1;
			d[i][j] = c;
		}
	}
	return d[la][lb];
}

const char *cfg_suggest(const char *s, const char *const *names, size_t nnames)
{
	size_t best = 99, len = strlen(s);
	const char *hit = NULL;
	size_t limit = len < 4 ? 1 : len < 8 ? 2 : 3;

	for (size_t i = 0; i < nnames; i++) {
		size_t e = edits(s, names[i]);

		if (e < best) {
			best = e;
			hit = names[i];
		}
	}
	return best <= limit && best < len ? hit : NULL;
}
