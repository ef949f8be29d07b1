/* emu/run/plan.h — the checks of a configuration that need more than its keys: the
 * model it names, the memory a synthetic data set takes, the shards the workers get.
 * Each refuses, before any worker is forked, what could only fail (or silently do
 * something else) later, with what to change.  emu check runs the first (on the data
 * set's nominal input: the files are not read), emu run both.
 */
#ifndef EMU_PLAN_H
#define EMU_PLAN_H

#include <stddef.h>
#include "emu/cfg/cfg.h"
#include "nn/data.h"

/* The model fits the data set's input (nominal until the data is read, in: NULL), the
 * JointSpar budget is feasible for its layers (p_min * layers <= budget), and a
 * synthetic data set fits in the memory available.  0, or -EINVAL with the message. */
int plan_check_config(const struct cfg *c, const struct nn_input *in, char *err,
		      size_t errlen);

/* in with the model's description when train.model = custom (its desc points into c):
 * the input every nn_model_init and nn_model_size of c's model is given. */
struct nn_input plan_model_input(const struct cfg *c, const struct nn_input *in);

/* Once the data is read: every worker's shard holds samples (a skewed Dirichlet or
 * label split can leave one with none).  0, or -EINVAL with the message. */
int plan_check_shards(const struct cfg *c, const struct nn_dataset *train, char *err,
		      size_t errlen);

/* The data layer's name for the configuration's shard kind. */
enum data_shard_kind plan_shard_kind(enum cfg_shard s);

#endif
