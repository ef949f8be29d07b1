/* emu/cfg/cfg_model.c — the [model] section: the lines of a described model kept as given
 * (c->model, nn/model_desc.h), and its checks once the file is read.  What needs the
 * data's shape (a kernel larger than its input, an add of two shapes) is checked when the
 * data set is known (emu/run/plan.c), with the same messages at the same lines. */
#include <stdio.h>
#include <string.h>

#include "emu/cfg/cfg_loader.h"

int cfg_model_key(struct loader *L, loc_t loc, const char *name, const char *value)
{
	struct nn_desc *d = &L->c->model;
	struct nn_desc_line *l = NULL;

	for (int i = 0; i < d->n; i++)
		if (!strcmp(d->l[i].name, name))
			l = &d->l[i];
	if (l && loc > 0 && l->line > 0)
		return cfg_fail(L, loc, "duplicate layer '%s' in [model]; first at line %d", name,
				l->line);
	if (strlen(name) >= sizeof(l->name) || strlen(value) >= sizeof(l->text))
		return cfg_fail(L, loc, "model.%s: expected a name of at most %zu characters and "
				"a layer of at most %zu", name, sizeof(l->name) - 1,
				sizeof(l->text) - 1);
	if (!l && d->n == NN_DESC_LINES)
		return cfg_fail(L, loc, "model.%s: more than %d lines in [model]", name,
				NN_DESC_LINES);
	if (!l)
		l = &d->l[d->n++];
	snprintf(l->name, sizeof(l->name), "%s", name);
	snprintf(l->text, sizeof(l->text), "%s", value);
	l->line = loc;
	return 0;
}

int cfg_check_model(struct loader *L)
{
	const struct cfg *c = L->c;
	const struct nn_desc *d = &c->model;
	const struct cfg_key *k = cfg_key_find("train", "model");
	loc_t at = L->key_loc[k - cfg_keys];
	char msg[512];
	int bad;

	if (strcmp(c->train.model, "custom")) {
		if (d->n)
			cfg_warn(L, d->l[0].line, "[model] has no effect: it acts only with "
				 "train.model = custom (train.model = %s)", c->train.model);
		return 0;
	}
	if (!d->n) {
		loc_t sect = L->sect_loc[CFG_SECTION_MODEL];

		return cfg_fail(L, sect ? sect : at, "train.model = custom %s; expected its layers, "
				"NAME = OP lines in [model] (docs/models.md)",
				sect ? "with an empty [model]" : "without a [model] section");
	}
	if (nn_desc_check(d, NULL, &bad, msg, sizeof(msg)) == 0)
		return 0;
	if (bad < 0)
		return cfg_fail(L, L->sect_loc[CFG_SECTION_MODEL], "[model]: %s", msg);
	return cfg_fail(L, d->l[bad].line, "model.%s", msg);
}
