/* emu/algo/algo.c — the registry of algorithms. */
#include "emu/algo/algo.h"

const struct algo *algo_find(enum cfg_algo a)
{
	switch (a) {
	case ALGO_RPS: return &algo_rps;
	case ALGO_ALLREDUCE: return &algo_allreduce;
	case ALGO_SIGNUM: return &algo_signum;
	case ALGO_JOINTSPAR:
	case ALGO_JOINTSPAR_LARS: return &algo_jointspar;
	case ALGO_DPSGD: return &algo_dpsgd;
	case ALGO_LOCALSGD: return &algo_localsgd;
	case ALGO_TOPK: return &algo_topk;
	case ALGO_QSGD: return &algo_qsgd;
	case ALGO_HADAMARD: return &algo_hadamard;
	case ALGO_PLUGIN: return &algo_plugin;
	case ALGO_RING: return &algo_ring;
	}
	return NULL;
}
