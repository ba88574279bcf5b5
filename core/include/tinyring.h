/* tinyring: the one header a firmware project or host program includes.
 * Freestanding C99; every byte of memory is the caller's. */
#ifndef TINYRING_H
#define TINYRING_H

#define TR_VERSION_MAJOR 0
#define TR_VERSION_MINOR 1

#include "tr_error.h"
#include "tr_arena.h"
#include "tr_math.h"
#include "tr_rng.h"
#include "tr_model.h"
#include "tr_sgd.h"
#include "tr_transport.h"
#include "tr_comm.h"
#include "tr_codec.h"
#include "tr_train.h"

#endif /* TINYRING_H */
