/* emu/cfg/cfg_help_data.c — the data sets' reference (cfg_help_data.h).  One entry per
 * value of data.dataset; a test (tests/check_help_data.test.sh) finds every value of the
 * table here, so a new data set cannot go undocumented. */
#include "emu/cfg/cfg_help_data.h"

#include <errno.h>

static const char datasets[] =
	"\n"
	"Data sets (data.dataset) and the files each reads from data.dir:\n"
	"  fashion-mnist  28x28 grey images of clothes, 10 classes, 60000 for training and\n"
	"      10000 for test.  Debian packages it: apt-get install dataset-fashion-mnist puts\n"
	"      it in /usr/share/datasets/fashion-mnist, data.dir's default.  Files:\n"
	"      train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and\n"
	"      t10k-labels-idx1-ubyte, each plain or gzipped (NAME.gz; the plain file wins).\n"
	"  cifar10  32x32 colour images, 10 classes, 50000 for training and 10000 for test.\n"
	"      Not in Debian: download cifar-10-binary.tar.gz from\n"
	"      https://www.cs.toronto.edu/~kriz/cifar.html, unpack it, and set data.dir to the\n"
	"      folder it makes, cifar-10-batches-bin (data.dir = /data/cifar-10-batches-bin).\n"
	"      Files: data_batch_1.bin to data_batch_5.bin for training (those present are\n"
	"      used, at least one) and test_batch.bin; each a run of 3073-byte records: the\n"
	"      label byte, then 1024 red, 1024 green and 1024 blue bytes, rows of 32.\n"
	"  text  text classification, for train.model = lstm.  Files: train.tsv and test.tsv,\n"
	"      one sample a line: the label (0, 1, 2, ...), a TAB, then the tokens, separated\n"
	"      by blanks; blank lines are skipped.  For example (-> is the TAB):\n"
	"          1->a fine and moving film\n"
	"          0->dull\n"
	"      The vocabulary is the tokens of train.tsv; a token it lacks reads as <unk>.\n"
	"      Each sample is cut or padded to data.seq_len tokens; the classes are 0 to the\n"
	"      largest label.\n"
	"  gaussian  synthetic, no files: data.synthetic_size samples of data.dim features,\n"
	"      data.classes classes, each a Gaussian around its own mean, all drawn from\n"
	"      run.seed; a test set from the same distribution, a quarter as large (at least\n"
	"      256).  For train.model = mlp or logreg.\n"
	"  linreg  synthetic regression, no files: data.dim features x, target <w, x> +\n"
	"      data.noise * N(0, 1) for a w drawn from run.seed; sizes as gaussian.  For\n"
	"      train.model = linreg.\n"
	"data.train_limit and data.test_limit keep only the first samples of a set;\n"
	"data.shard says how the training samples are split among the workers.\n";

int cfg_help_datasets(FILE *f)
{
	fputs(datasets, f);
	return ferror(f) ? -EIO : 0;
}
