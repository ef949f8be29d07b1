/* nn/model/models.c — the architectures, layer for layer as in shared/peers/torch_step_models.py
 * (lstm: nn.Embedding(V,64), nn.LSTM(64,128), nn.Linear(128,K) on the last hidden
 * state), with the state-dict names of torchvision-style models. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "nn/model/model_impl.h"

static int image_dims(const struct nn_input *in)
{
	return in->T == 0 && in->C > 0 && in->H > 0 && in->W > 0;
}

static int mlp(struct nn_graph *g, const struct nn_input *in)
{
	int x = nn_g_input(g, in->C, in->H, in->W);
	x = nn_g_flatten(g, x);
	x = nn_g_linear(g, x, 256, "fc1");
	x = nn_g_relu(g, x);
	nn_g_linear(g, x, in->nclasses, "fc2");
	return g->err;
}

static int lenet(struct nn_graph *g, const struct nn_input *in)
{
	int x = nn_g_input(g, in->C, in->H, in->W);
	x = nn_g_conv(g, x, 6, 5, 1, 2, true, "conv1");
	x = nn_g_relu(g, x);
	x = nn_g_maxpool(g, x, 2, 2);
	x = nn_g_conv(g, x, 16, 5, 1, 0, true, "conv2");
	x = nn_g_relu(g, x);
	x = nn_g_maxpool(g, x, 2, 2);
	x = nn_g_flatten(g, x);
	x = nn_g_linear(g, x, 120, "fc1");
	x = nn_g_relu(g, x);
	x = nn_g_linear(g, x, 84, "fc2");
	x = nn_g_relu(g, x);
	nn_g_linear(g, x, in->nclasses, "fc3");
	return g->err;
}

/* One basic block: conv-bn-relu-conv-bn, plus the identity or a 1x1 conv + bn
 * projection when the shape changes (option B), then relu. */
static int block(struct nn_graph *g, int x, int cout, int stride, const char *pre)
{
	char n[48];
	int cin = x >= 0 ? g->nodes[x].C : 0;
	snprintf(n, sizeof(n), "%s.conv1", pre);
	int o = nn_g_conv(g, x, cout, 3, stride, 1, false, n);
	snprintf(n, sizeof(n), "%s.bn1", pre);
	o = nn_g_bn(g, o, n);
	o = nn_g_relu(g, o);
	snprintf(n, sizeof(n), "%s.conv2", pre);
	o = nn_g_conv(g, o, cout, 3, 1, 1, false, n);
	snprintf(n, sizeof(n), "%s.bn2", pre);
	o = nn_g_bn(g, o, n);
	int s = x;
	if (stride != 1 || cin != cout) {
		snprintf(n, sizeof(n), "%s.shortcut.0", pre);
		s = nn_g_conv(g, x, cout, 1, stride, 0, false, n);
		snprintf(n, sizeof(n), "%s.shortcut.1", pre);
		s = nn_g_bn(g, s, n);
	}
	o = nn_g_add(g, o, s);
	return nn_g_relu(g, o);
}

static int resnet(struct nn_graph *g, const struct nn_input *in, int depth)
{
	int nblocks = (depth - 2) / 6;
	int x = nn_g_input(g, in->C, in->H, in->W);
	x = nn_g_conv(g, x, 16, 3, 1, 1, false, "conv1");
	x = nn_g_bn(g, x, "bn1");
	x = nn_g_relu(g, x);
	static const int width[3] = {16, 32, 64};
	for (int st = 0; st < 3; st++)
		for (int i = 0; i < nblocks; i++) {
			char pre[24];
			snprintf(pre, sizeof(pre), "layer%d.%d", st + 1, i);
			x = block(g, x, width[st], st > 0 && i == 0 ? 2 : 1, pre);
		}
	x = nn_g_gap(g, x);
	nn_g_linear(g, x, in->nclasses, "fc");
	return g->err;
}

static int lstm(struct nn_graph *g, const struct nn_input *in)
{
	if (in->T < 1 || in->vocab < 1)
		return -EINVAL;
	int x = nn_g_embed(g, in->T, in->vocab, 64, "embed");
	x = nn_g_lstm(g, x, 128, "lstm");
	nn_g_linear(g, x, in->nclasses, "fc");
	return g->err;
}

static int linear_model(struct nn_graph *g, const struct nn_input *in, int out)
{
	int x = nn_g_input(g, in->C, in->H, in->W);
	x = nn_g_flatten(g, x);
	nn_g_linear(g, x, out, "fc");
	return g->err;
}

int nn_models_build(struct nn_graph *g, const char *name, const struct nn_input *in)
{
	if (!name || !in || in->nclasses < 1 || (in->regression && in->nclasses != 1))
		return -EINVAL;
	bool image = image_dims(in);
	if (!strcmp(name, "custom"))
		return in->desc ? nn_desc_build(g, in->desc, in, NULL, NULL, 0) : -EINVAL;
	if (!strcmp(name, "lstm"))
		return in->regression ? -EINVAL : lstm(g, in);
	if (!image)
		return -EINVAL;
	if (!strcmp(name, "linreg"))
		return in->regression ? linear_model(g, in, 1) : -EINVAL;
	if (in->regression)
		return -EINVAL;
	if (!strcmp(name, "mlp"))
		return mlp(g, in);
	if (!strcmp(name, "lenet"))
		return lenet(g, in);
	if (!strcmp(name, "logreg"))
		return linear_model(g, in, in->nclasses);
	static const int depths[] = {20, 32, 44, 56, 110};
	for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		char n[16];
		snprintf(n, sizeof(n), "resnet%d", depths[i]);
		if (!strcmp(name, n))
			return resnet(g, in, depths[i]);
	}
	return -EINVAL;
}
