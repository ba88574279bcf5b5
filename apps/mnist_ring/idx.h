/* mnist_ring: IDX data files (MNIST's format), raw or gzip'd.
 *
 * IDX: a big-endian header (magic 0x00000803 for a ubyte 3-d image file,
 * 0x00000801 for a ubyte 1-d label file, then one u32 per dimension) and the
 * bytes. zlib's gzread reads both .gz and plain files. Every problem is a
 * message naming the file and what is wrong, written into err[].
 */
#ifndef MR_IDX_H
#define MR_IDX_H

#include <stddef.h>
#include <stdint.h>

#define MR_IMG_H 28u
#define MR_IMG_W 28u
#define MR_IMG_PIXELS (MR_IMG_H * MR_IMG_W)

struct mr_dataset {
    uint32_t n;          /* samples */
    uint8_t *images;     /* (n, 28, 28) pixels 0..255, malloc'd */
    uint8_t *labels;     /* (n) classes 0..9, malloc'd */
    char     img_path[1024];  /* the files it came from, for messages */
    char     lbl_path[1024];
};

/* Load one image file and one label file and check them against each other
 * (magic, 28x28, counts equal, labels < 10, nothing missing or extra).
 * Returns 0, or a negative tr_err with a message in err (errlen bytes). */
int mr_idx_load(struct mr_dataset *ds, const char *img_path, const char *lbl_path,
                char *err, size_t errlen);

/* Find "train" or "t10k" files under dir: dir/NAME, dir/NAME.gz, and the
 * same in dir/MNIST/raw and dir/FashionMNIST/raw (torchvision's layouts).
 * NAME is e.g. train-images-idx3-ubyte. Returns 0 and fills both paths, or
 * TR_ERR_IO with a message listing where it looked. */
int mr_idx_find(const char *dir, const char *split, char *img_path, char *lbl_path,
                size_t pathlen, char *err, size_t errlen);

/* Load the train and test splits from dir. */
int mr_idx_load_dir(const char *dir, struct mr_dataset *train, struct mr_dataset *test,
                    char *err, size_t errlen);

void mr_dataset_free(struct mr_dataset *ds);

#endif /* MR_IDX_H */
