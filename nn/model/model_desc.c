/* nn/model/model_desc.c — a described model (nn/model_desc.h) read line by line into the
 * graph builder: first every line's op, arguments and inputs (parse), then the structure
 * (what reads what), then, with the data's shape, one builder call per line after the
 * shape checks that name the line. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nn/model/model_impl.h"
#include "nn/model_desc.h"

enum op { OP_CONV, OP_BN, OP_RELU, OP_MAXPOOL, OP_AVGPOOL, OP_GAP, OP_FLATTEN, OP_LINEAR,
	  OP_ADD, OP_EMBED, OP_LSTM, NOPS };

/* Each op: its positional arguments, the options it takes, its inputs after "from". */
static const struct {
	const char *name;
	int npos;		/* integer arguments */
	const char *opts;	/* the options, space separated (key=value) */
	int nin;		/* inputs: 1 (the line above unless named), 2 (named), 0 (the tokens) */
	const char *usage;
} ops[NOPS] = {
	[OP_CONV] = { "conv", 2, "stride pad bias", 1, "conv OUT K [stride=S] [pad=P] [bias=false]" },
	[OP_BN] = { "batchnorm", 0, "", 1, "batchnorm" },
	[OP_RELU] = { "relu", 0, "", 1, "relu" },
	[OP_MAXPOOL] = { "maxpool", 1, "stride", 1, "maxpool K [stride=S]" },
	[OP_AVGPOOL] = { "avgpool", 1, "stride", 1, "avgpool K [stride=S]" },
	[OP_GAP] = { "gap", 0, "", 1, "gap" },
	[OP_FLATTEN] = { "flatten", 0, "", 1, "flatten" },
	[OP_LINEAR] = { "linear", 1, "", 1, "linear OUT (a number or classes)" },
	[OP_ADD] = { "add", 0, "", 2, "add from A B" },
	[OP_EMBED] = { "embedding", 1, "", 0, "embedding DIM" },
	[OP_LSTM] = { "lstm", 1, "", 1, "lstm HIDDEN" },
};

#define IN_DATA (-1)		/* an input that is the data ("input") */
#define ARG_MAX 65536		/* the largest number an argument may be */
#define CLASSES (-1)		/* linear's OUT given as "classes" */

struct parsed {
	enum op op;
	int arg[2];		/* positional: conv OUT K; pool K; linear OUT; embedding DIM; lstm HIDDEN */
	int stride, pad;	/* stride 0: the pool's K (conv: 1) */
	bool bias;
	int nin, in[2];		/* line indexes of the inputs, or IN_DATA */
};

static int say(char *msg, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(char *msg, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (msg && n) {
		va_start(ap, fmt);
		vsnprintf(msg, n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static void op_names(char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = 0;
	for (int o = 0; o < NOPS && used < n; o++)
		used += (size_t)snprintf(buf + used, n - used, "%s%s", o ? ", " : "", ops[o].name);
}

static bool name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

/* A whole number in [lo, ARG_MAX] at s: 0, or -1. */
static int number(const char *s, int lo, int *out)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > ARG_MAX)
		return -1;
	*out = (int)v;
	return 0;
}

/* The line whose name is s, or IN_DATA for "input"; -2: none above line i (*later: a line
 * below has it). */
static int find_input(const struct nn_desc *d, int i, const char *s, bool *later)
{
	*later = false;
	if (!strcmp(s, "input"))
		return IN_DATA;
	for (int j = 0; j < d->n; j++)
		if (!strcmp(d->l[j].name, s)) {
			if (j < i)
				return j;
			*later = true;
		}
	return -2;
}

/* key=value option tok of line i's op o into p. */
static int option(const struct nn_desc_line *l, enum op o, char *tok, struct parsed *p,
		  char *msg, size_t n)
{
	char *eq = strchr(tok, '=');
	const char *key = tok, *val = eq ? eq + 1 : "";
	size_t klen = eq ? (size_t)(eq - tok) : strlen(tok);
	const char *opts = ops[o].opts;
	bool known = false;

	for (const char *q = opts; *q; q += strcspn(q, " "), q += *q == ' ')
		if (strcspn(q, " ") == klen && !strncmp(q, key, klen))
			known = true;
	if (!eq || !known) {
		if (!*opts)
			return say(msg, n, "%s: '%s' after %s; expected %s", l->name, tok,
				   ops[o].name, ops[o].usage);
		return say(msg, n, "%s: unknown option '%s' of %s; expected %s", l->name, tok,
			   ops[o].name, ops[o].usage);
	}
	if (!strncmp(key, "stride", klen) && number(val, 1, &p->stride) == 0)
		return 0;
	if (!strncmp(key, "pad", klen) && number(val, 0, &p->pad) == 0)
		return 0;
	if (!strncmp(key, "bias", klen) && (!strcmp(val, "true") || !strcmp(val, "false"))) {
		p->bias = !strcmp(val, "true");
		return 0;
	}
	return say(msg, n, "%s: %s has %s; expected %s", l->name, ops[o].name, tok,
		   !strncmp(key, "bias", klen) ? "bias=true or bias=false" :
		   !strncmp(key, "pad", klen) ? "pad=P, a whole number from 0 to 65536" :
		   "stride=S, a whole number from 1 to 65536");
}

/* Line i of d into p: op, arguments, inputs (named ones above line i). */
static int parse_line(const struct nn_desc *d, int i, struct parsed *p, char *msg, size_t n)
{
	const struct nn_desc_line *l = &d->l[i];
	char text[NN_DESC_TEXT], *save = NULL, *tok, names[160];
	int npos = 0, o;

	memset(p, 0, sizeof(*p));
	p->bias = true;
	if (!name_ok(l->name) || strlen(l->name) >= NN_DESC_NAME)
		return say(msg, n, "'%s' is not a layer name; expected letters, digits and _, at "
			   "most %d", l->name, NN_DESC_NAME - 1);
	if (!strcmp(l->name, "input"))
		return say(msg, n, "input: the name of the data; expected another name");
	for (int j = 0; j < i; j++)
		if (!strcmp(d->l[j].name, l->name))
			return say(msg, n, "%s: a second line of this name; expected one line per "
				   "name", l->name);
	snprintf(text, sizeof(text), "%s", l->text);
	tok = strtok_r(text, " \t", &save);
	op_names(names, sizeof(names));
	if (!tok)
		return say(msg, n, "%s: no op; expected one of %s", l->name, names);
	for (o = 0; o < NOPS && strcmp(tok, ops[o].name); o++)
		;
	if (o == NOPS && !strcmp(tok, "dropout"))
		return say(msg, n, "%s: dropout is not supported (no backend has a dropout op); "
			   "expected one of %s", l->name, names);
	if (o == NOPS)
		return say(msg, n, "%s: unknown op '%s'; expected one of %s", l->name, tok, names);
	p->op = (enum op)o;
	while ((tok = strtok_r(NULL, " \t", &save)) && strcmp(tok, "from")) {
		if (strchr(tok, '=')) {
			if (option(l, p->op, tok, p, msg, n))
				return -EINVAL;
			continue;
		}
		if (npos == ops[o].npos)
			return say(msg, n, "%s: '%s' after %s; expected %s", l->name, tok,
				   ops[o].name, ops[o].usage);
		if (p->op == OP_LINEAR && !strcmp(tok, "classes"))
			p->arg[npos++] = CLASSES;
		else if (number(tok, 1, &p->arg[npos++]))
			return say(msg, n, "%s: %s has '%s'; expected %s, each number from 1 to %d",
				   l->name, ops[o].name, tok, ops[o].usage, ARG_MAX);
	}
	if (npos < ops[o].npos)
		return say(msg, n, "%s: %s needs %d argument%s; expected %s", l->name, ops[o].name,
			   ops[o].npos, ops[o].npos > 1 ? "s" : "", ops[o].usage);
	if (p->op == OP_CONV && !p->stride)
		p->stride = 1;
	if ((p->op == OP_MAXPOOL || p->op == OP_AVGPOOL) && !p->stride)
		p->stride = p->arg[0];
	if (!tok) {		/* no "from": the line above, or the data on the first line */
		if (ops[o].nin == 2)
			return say(msg, n, "%s: add names its inputs; expected add from A B", l->name);
		p->nin = ops[o].nin;
		p->in[0] = i ? i - 1 : IN_DATA;
		return 0;
	}
	if (ops[o].nin == 0)
		return say(msg, n, "%s: an embedding reads the tokens; expected no from", l->name);
	while ((tok = strtok_r(NULL, " \t", &save))) {
		bool later;
		int j = find_input(d, i, tok, &later);

		if (p->nin == ops[o].nin)
			return say(msg, n, "%s: %s reads %d input%s; expected %s", l->name,
				   ops[o].name, ops[o].nin, ops[o].nin > 1 ? "s" : "",
				   ops[o].nin > 1 ? "add from A B" : "from NAME, one line above");
		if (j == -2 && later)
			return say(msg, n, "%s: from %s, not a line above; expected input or the "
				   "name of a line above", l->name, tok);
		if (j == -2)
			return say(msg, n, "%s: from %s: no line of that name; expected input or "
				   "the name of a line above", l->name, tok);
		p->in[p->nin++] = j;
	}
	if (p->nin < ops[o].nin || !p->nin)
		return say(msg, n, "%s: %s reads %d input%s; expected %s", l->name, ops[o].name,
			   ops[o].nin, ops[o].nin > 1 ? "s" : "",
			   ops[o].nin > 1 ? "add from A B" : "from NAME, one line above");
	return 0;
}

/* Every line parsed into p, then what reads what: an embedding only first, an lstm on
 * an embedding, every line but the last read by another. */
static int parse_all(const struct nn_desc *d, struct parsed *p, int *bad, char *msg,
		     size_t n)
{
	if (d->n < 1)
		return say(msg, n, "no layers; expected NAME = OP lines (docs/models.md)");
	if (d->n > NN_DESC_LINES)
		return say(msg, n, "%d lines; expected at most %d", d->n, NN_DESC_LINES);
	for (int i = 0; i < d->n; i++) {
		*bad = i;
		if (parse_line(d, i, &p[i], msg, n))
			return -EINVAL;
		const char *name = d->l[i].name;
		if (p[i].op == OP_EMBED && i > 0)
			return say(msg, n, "%s: an embedding reads the tokens; expected it on the "
				   "first line", name);
		if (p[i].op == OP_LSTM && (p[i].in[0] < 0 || p[p[i].in[0]].op != OP_EMBED))
			return say(msg, n, "%s: an lstm reads an embedding's output; expected it "
				   "after the embedding line", name);
	}
	for (int i = 0; i + 1 < d->n; i++) {
		bool read = false;

		for (int j = i + 1; j < d->n && !read; j++)
			read = p[j].in[0] == i || (p[j].nin == 2 && p[j].in[1] == i);
		if (!read) {
			*bad = i;
			return say(msg, n, "%s: no line reads its output; expected every line but "
				   "the last to feed another (the last gives the logits)",
				   d->l[i].name);
		}
	}
	*bad = -1;
	return 0;
}

static void shape(const struct nn_node *x, char *buf, size_t n)
{
	snprintf(buf, n, "%dx%dx%d", x->C, x->H, x->W);
}

/* Line i's layer on the graph, after its shape checks; node[] the lines' nodes so far,
 * data the input node (-1 on tokens). */
static int build_line(struct nn_graph *g, const struct nn_desc *d, int i,
		      const struct parsed *p, const int *node, int data,
		      const struct nn_input *in, char *msg, size_t n)
{
	const char *name = d->l[i].name;
	int x[2] = { -1, -1 }, r = -1;
	char s0[48], s1[48];

	for (int j = 0; j < p->nin; j++) {
		x[j] = p->in[j] == IN_DATA ? data : node[p->in[j]];
		if (x[j] < 0)
			return say(msg, n, "%s: reads the data, which are tokens; expected an "
				   "embedding first", name);
	}
	if (p->op == OP_EMBED && in->T < 1)
		return say(msg, n, "%s: an embedding reads tokens; expected a data set of tokens "
			   "(the data are images %dx%dx%d)", name, in->C, in->H, in->W);
	const struct nn_node *a = x[0] >= 0 ? &g->nodes[x[0]] : NULL;
	if (a)
		shape(a, s0, sizeof(s0));
	switch (p->op) {
	case OP_CONV:
		if (a->H + 2 * p->pad < p->arg[1] || a->W + 2 * p->pad < p->arg[1])
			return say(msg, n, "%s: a %dx%d kernel over input %s with pad %d; expected "
				   "a kernel that fits", name, p->arg[1], p->arg[1], s0, p->pad);
		r = nn_g_conv(g, x[0], p->arg[0], p->arg[1], p->stride, p->pad, p->bias, name);
		break;
	case OP_BN:
		r = nn_g_bn(g, x[0], name);
		break;
	case OP_RELU:
		r = nn_g_relu(g, x[0]);
		break;
	case OP_MAXPOOL:
	case OP_AVGPOOL:
		if (a->H < p->arg[0] || a->W < p->arg[0])
			return say(msg, n, "%s: a %dx%d window over input %s; expected a window "
				   "that fits", name, p->arg[0], p->arg[0], s0);
		r = (p->op == OP_MAXPOOL ? nn_g_maxpool : nn_g_avgpool)(g, x[0], p->arg[0],
									p->stride);
		break;
	case OP_GAP:
		r = nn_g_gap(g, x[0]);
		break;
	case OP_FLATTEN:
		r = nn_g_flatten(g, x[0]);
		break;
	case OP_LINEAR:
		if (a->H != 1 || a->W != 1)
			return say(msg, n, "%s: linear on input %s; expected a flat input (a flatten "
				   "line before it)", name, s0);
		r = nn_g_linear(g, x[0], p->arg[0] == CLASSES ? in->nclasses : p->arg[0], name);
		break;
	case OP_ADD:
		shape(&g->nodes[x[1]], s1, sizeof(s1));
		if (strcmp(s0, s1))
			return say(msg, n, "%s: add of %s (%s) and %s (%s); expected two inputs of "
				   "one shape", name, s0, p->in[0] == IN_DATA ? "input" :
				   d->l[p->in[0]].name, s1, p->in[1] == IN_DATA ? "input" :
				   d->l[p->in[1]].name);
		r = nn_g_add(g, x[0], x[1]);
		break;
	case OP_EMBED:
		r = nn_g_embed(g, in->T, in->vocab, p->arg[0], name);
		break;
	case OP_LSTM:
		r = nn_g_lstm(g, x[0], p->arg[0], name);
		break;
	case NOPS:
		break;
	}
	if (r < 0 && g->err == -ENOMEM)
		return -ENOMEM;
	if (r < 0)
		return say(msg, n, "%s: %s cannot take input %s", name, ops[p->op].name,
			   a ? s0 : "tokens");
	return r;
}

int nn_desc_build(struct nn_graph *g, const struct nn_desc *d, const struct nn_input *in,
		  int *bad, char *msg, size_t n)
{
	int tmp, data = -1, r = 0;
	struct parsed *p;
	int *node;

	bad = bad ? bad : &tmp;
	*bad = -1;
	if (d->n < 1 || d->n > NN_DESC_LINES)
		return parse_all(d, NULL, bad, msg, n);
	p = calloc((size_t)d->n, sizeof(*p));
	node = calloc((size_t)d->n, sizeof(*node));
	if (!p || !node) {
		r = -ENOMEM;
		goto out;
	}
	r = parse_all(d, p, bad, msg, n);
	if (r || !in)
		goto out;
	if (in->T < 1)
		data = nn_g_input(g, in->C, in->H, in->W);
	else if (p[0].op != OP_EMBED) {
		*bad = 0;
		r = say(msg, n, "%s: the data are tokens; expected an embedding on the first line",
			d->l[0].name);
		goto out;
	}
	for (int i = 0; i < d->n && !r; i++) {
		*bad = i;
		node[i] = build_line(g, d, i, &p[i], node, data, in, msg, n);
		r = node[i] < 0 ? node[i] : 0;
	}
	if (r)
		goto out;
	const struct nn_node *last = &g->nodes[g->nnodes - 1];
	if (last->C != in->nclasses || last->H != 1 || last->W != 1) {
		char s[48];

		shape(last, s, sizeof(s));
		r = say(msg, n, "%s: the last line gives %s; expected the logits, %d value%s, one "
			"per class of the data (linear classes)", d->l[d->n - 1].name, s,
			in->nclasses, in->nclasses > 1 ? "s" : "");
		goto out;
	}
	*bad = -1;
out:
	if (r == -ENOMEM)
		say(msg, n, "out of memory");
	free(p);
	free(node);
	return r;
}

int nn_desc_check(const struct nn_desc *d, const struct nn_input *in, int *bad, char *msg,
		  size_t n)
{
	struct nn_graph g;
	int r;

	nn_graph_init(&g);
	r = nn_desc_build(&g, d, in, bad, msg, n);
	if (!r && g.err)
		r = say(msg, n, "the graph builder refused it (%d)", g.err);
	nn_graph_free(&g);
	return r;
}
