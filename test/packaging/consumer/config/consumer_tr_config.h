/* test/packaging consumer: a configuration header (TR_CONFIG_FILE, see
 * core/include/tr_config.h) with a limit other than the default. Core and
 * the demo must both see it: struct tr_train_config holds the model's
 * layer[TR_MAX_LAYERS], so a side that misses it reads the other fields at
 * other offsets, and the demo fails or trains on garbage. */
#ifndef CONSUMER_TR_CONFIG_H
#define CONSUMER_TR_CONFIG_H
#define TR_MAX_LAYERS 40
#define CONSUMER_TR_CONFIG 1
#endif
