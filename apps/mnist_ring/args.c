/* mnist_ring: command line parsing (see args.h). */
#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_codec.h"
#include "tr_comm.h"

static const char usage[] =
"usage: mnist_ring [options]\n"
"  training\n"
"    --epochs N            epochs (1)\n"
"    --batch N             samples per rank per step (100)\n"
"    --lr X                learning rate (0.001)\n"
"    --momentum X          SGD momentum (0.9)\n"
"    --seed N              parameter init and shuffling seed (0)\n"
"    --allreduce ALGO      ring | chain | reduce-bcast (ring)\n"
"    --compress CODEC      gradients on the wire: none|bf16|int8|int4 (none);\n"
"                          lossy codecs keep an error-feedback residual (ring only)\n"
"    --average-every K     periodic averaging: K local steps, then the parameters\n"
"                          averaged over the ring (0 or 1: gradients every step);\n"
"                          with --compress, their change since the last average\n"
"    --max-steps N         stop after N steps in total (0: no limit)\n"
"  data and files\n"
"    --data DIR            IDX files: DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]\n"
"                          or DIR/MNIST/raw/..., DIR/FashionMNIST/raw/... (data)\n"
"    --checkpoint FILE     save the training state every epoch (atomically)\n"
"    --checkpoint-every K  ... and every K steps\n"
"    --resume              continue from --checkpoint (bit for bit)\n"
"    --metrics FILE.csv    one row per epoch\n"
"    --plot FILE.png       loss and accuracy curves (gnuplot)\n"
"    --plot-from FILE.csv  only draw an existing metrics file into --plot\n"
"    --save-model FILE     final parameters and BN statistics (format: README)\n"
"  launching\n"
"    --nproc N             start N ranks on this host (tcp on 127.0.0.1)\n"
"    --init-method URL     tcp://HOST:PORT (with --rank, --world-size) or env://;\n"
"                          with --elastic, tcp://HOST:PORT,HOST2:PORT2,... (up to 4):\n"
"                          any of them finds the job once rank 0 is gone\n"
"    --peers FILE          a static table instead: one 'RANK IPV4:PORT' per line (with\n"
"                          --rank; rings with boards), see README\n"
"    --rank R  --world-size N\n"
"    --iface NAME          listen for ring links on this interface's address\n"
"    --job-token STR       ranks of one job share it; others are refused\n"
"    --timeout S           a collective without progress for S seconds fails (60)\n"
"    --elastic             a lost rank does not end the job: the others go on, and a\n"
"                          rank started again with the same command line rejoins\n"
"    --min-ranks M         --elastic: stop (with a checkpoint) below M ranks (1)\n"
"  output\n"
"    --quiet               no progress line within an epoch\n"
"    --warmup-steps K      the first epoch's samples/s and seconds count from the end of\n"
"                          its K-th step here: the first steps fault memory in and fill\n"
"                          the caches (0; bench-train gives 5, as its PyTorch peer)\n"
"    --debug-param-hash    every rank prints a hash of its parameters per step\n";

void mr_args_min_ranks_too_many(unsigned min_ranks, int world)
{
    fprintf(stderr, "mnist_ring: --min-ranks %u is more than the %d rank%s of the job: it "
            "could never train\n", min_ranks, world, world == 1 ? "" : "s");
}

const char *mr_algo_name(int algo)
{
    switch (algo) {
    case TR_ALGO_RING: return "ring";
    case TR_ALGO_CHAIN: return "chain";
    case TR_ALGO_REDUCE_BCAST: return "reduce-bcast";
    default: return "?";
    }
}

static int num_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    unsigned long long v;
    errno = 0;
    v = strtoull(s, &end, 10);
    /* digits only: strtoull skips white space and takes " -1" as 2^64-1 */
    if (errno || end == s || *end || !isdigit((unsigned char)s[0]) || v < lo || v > hi) {
        fprintf(stderr, "mnist_ring: %s: '%s' is not a whole number in %llu..%llu\n", opt, s,
                (unsigned long long)lo, (unsigned long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int num_f(const char *opt, const char *s, float lo, float hi, float *out)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "mnist_ring: %s: '%s' is not a number in %g..%g\n", opt, s, lo, hi);
        return -1;
    }
    if (v != 0 && (float)v < FLT_MIN) {
        fprintf(stderr, "mnist_ring: %s: '%s' is not a number in %g..%g: as a float it would "
                "be %g (the smallest normal float is %g)\n", opt, s, lo, hi, (double)(float)v,
                (double)FLT_MIN);
        return -1;
    }
    *out = (float)v;
    return 0;
}

static int bad_plot_name(const char *opt, const char *name)
{
    if (name && strpbrk(name, "\n\r")) {
        fprintf(stderr, "mnist_ring: %s: a file name with a newline is not supported\n", opt);
        return 1;
    }
    if (name && strchr(name, '\'')) {
        fprintf(stderr, "mnist_ring: %s: a file name with a quote is not supported\n", opt);
        return 1;
    }
    return 0;
}

enum {
    O_EPOCHS = 256, O_BATCH, O_LR, O_MOM, O_SEED, O_ALGO, O_DATA, O_CKPT, O_CKPT_EVERY,
    O_RESUME, O_METRICS, O_PLOT, O_PLOT_FROM, O_SAVE, O_NPROC, O_INIT, O_RANK, O_WORLD,
    O_IFACE, O_TOKEN, O_TIMEOUT, O_MAXSTEPS, O_HASH, O_QUIET, O_HELP, O_PEERS, O_ELASTIC,
    O_MIN_RANKS, O_WARMUP, O_COMPRESS, O_AVG_EVERY
};

int mr_args_parse(struct mr_args *a, int argc, char **argv)
{
    static const struct option opts[] = {
        { "epochs", 1, 0, O_EPOCHS }, { "batch", 1, 0, O_BATCH }, { "lr", 1, 0, O_LR },
        { "momentum", 1, 0, O_MOM }, { "seed", 1, 0, O_SEED }, { "allreduce", 1, 0, O_ALGO },
        { "data", 1, 0, O_DATA }, { "checkpoint", 1, 0, O_CKPT },
        { "checkpoint-every", 1, 0, O_CKPT_EVERY }, { "resume", 0, 0, O_RESUME },
        { "metrics", 1, 0, O_METRICS }, { "plot", 1, 0, O_PLOT },
        { "plot-from", 1, 0, O_PLOT_FROM }, { "save-model", 1, 0, O_SAVE },
        { "nproc", 1, 0, O_NPROC }, { "init-method", 1, 0, O_INIT }, { "rank", 1, 0, O_RANK },
        { "world-size", 1, 0, O_WORLD }, { "iface", 1, 0, O_IFACE },
        { "job-token", 1, 0, O_TOKEN }, { "timeout", 1, 0, O_TIMEOUT },
        { "max-steps", 1, 0, O_MAXSTEPS }, { "debug-param-hash", 0, 0, O_HASH },
        { "quiet", 0, 0, O_QUIET }, { "help", 0, 0, O_HELP }, { "peers", 1, 0, O_PEERS },
        { "elastic", 0, 0, O_ELASTIC }, { "min-ranks", 1, 0, O_MIN_RANKS },
        { "warmup-steps", 1, 0, O_WARMUP }, { "compress", 1, 0, O_COMPRESS },
        { "average-every", 1, 0, O_AVG_EVERY },
        { 0, 0, 0, 0 }
    };
    char o[32];                 /* the flag being parsed, "--name", for messages */
    uint64_t v;
    int c, li;

    memset(a, 0, sizeof *a);
    a->batch = 100;
    a->lr = 0.001f;
    a->momentum = 0.9f;
    a->epochs = 1;
    a->algo = TR_ALGO_RING;
    a->data = "data";
    a->rank = -1;
    a->world = -1;
    a->timeout_s = 60;
    a->min_ranks = 1;
    opterr = 0;
    for (;;) {
        li = -1;
        c = getopt_long(argc, argv, "h", opts, &li);
        if (c == -1)
            break;
        /* name the flag from the table: argv[optind - 1] is its value when
         * the value is a separate argument ("--batch 0") */
        snprintf(o, sizeof o, "--%s", li >= 0 ? opts[li].name : "?");
        switch (c) {
        case O_EPOCHS: if (num_u64(o, optarg, 1, 100000, &v)) return -1; a->epochs = (unsigned)v; break;
        case O_BATCH: if (num_u64(o, optarg, 1, 4096, &v)) return -1; a->batch = (unsigned)v; break;
        case O_LR: if (num_f(o, optarg, 0.0f, 100.0f, &a->lr)) return -1; break;
        case O_MOM: if (num_f(o, optarg, 0.0f, 0.9999f, &a->momentum)) return -1; break;
        case O_SEED: if (num_u64(o, optarg, 0, UINT64_MAX, &a->seed)) return -1; break;
        case O_ALGO:
            if (!strcmp(optarg, "ring")) a->algo = TR_ALGO_RING;
            else if (!strcmp(optarg, "chain")) a->algo = TR_ALGO_CHAIN;
            else if (!strcmp(optarg, "reduce-bcast")) a->algo = TR_ALGO_REDUCE_BCAST;
            else {
                fprintf(stderr, "mnist_ring: --allreduce: '%s': want ring, chain or reduce-bcast\n", optarg);
                return -1;
            }
            break;
        case O_COMPRESS: {
            int k;
            for (k = 0; k < TR_CODEC_COUNT && strcmp(optarg, tr_codec_name(k)); k++)
                ;
            if (k == TR_CODEC_COUNT) {
                fprintf(stderr, "mnist_ring: --compress: '%s': want none, bf16, int8 or int4\n", optarg);
                return -1;
            }
            a->compress = k;
            break;
        }
        case O_AVG_EVERY: if (num_u64(o, optarg, 0, UINT32_MAX, &v)) return -1; a->average_every = (unsigned)v; break;
        case O_DATA: a->data = optarg; break;
        case O_CKPT: a->checkpoint = optarg; break;
        case O_CKPT_EVERY: if (num_u64(o, optarg, 1, UINT32_MAX, &v)) return -1; a->checkpoint_every = (unsigned)v; break;
        case O_RESUME: a->resume = 1; break;
        case O_METRICS: a->metrics = optarg; break;
        case O_PLOT: a->plot = optarg; break;
        case O_PLOT_FROM: a->plot_from = optarg; break;
        case O_SAVE: a->save_model = optarg; break;
        case O_NPROC: if (num_u64(o, optarg, 1, 256, &v)) return -1; a->nproc = (int)v; break;
        case O_INIT: a->init_method = optarg; break;
        case O_PEERS: a->peers = optarg; break;
        case O_RANK: if (num_u64(o, optarg, 0, 255, &v)) return -1; a->rank = (int)v; break;
        case O_WORLD: if (num_u64(o, optarg, 1, 256, &v)) return -1; a->world = (int)v; break;
        case O_IFACE: a->iface = optarg; break;
        case O_TOKEN: a->job_token = optarg; break;
        case O_TIMEOUT: if (num_u64(o, optarg, 1, 86400, &v)) return -1; a->timeout_s = (unsigned)v; break;
        case O_MAXSTEPS: if (num_u64(o, optarg, 0, UINT64_MAX, &v)) return -1; a->max_steps = v; break;
        case O_HASH: a->debug_param_hash = 1; break;
        case O_QUIET: a->quiet = 1; break;
        case O_WARMUP: if (num_u64(o, optarg, 0, 1000000, &v)) return -1; a->warmup_steps = (unsigned)v; break;
        case O_ELASTIC: a->elastic = 1; break;
        case O_MIN_RANKS: if (num_u64(o, optarg, 1, 256, &v)) return -1; a->min_ranks = (unsigned)v; break;
        case 'h': case O_HELP: fputs(usage, stdout); return 1;
        default:
            fprintf(stderr, "mnist_ring: unknown or incomplete option '%s'\n%s", argv[optind - 1], usage);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "mnist_ring: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    /* the names go into a gnuplot script: a line break would start a command */
    if (bad_plot_name("--plot", a->plot) || bad_plot_name("--plot-from", a->plot_from))
        return -1;
    if (a->plot_from) {
        if (!a->plot) {
            fprintf(stderr, "mnist_ring: --plot-from needs --plot FILE.png\n");
            return -1;
        }
        return 0;
    }
    if (a->compress != TR_CODEC_NONE && a->algo != TR_ALGO_RING) {
        fprintf(stderr, "mnist_ring: --compress %s needs --allreduce ring\n", tr_codec_name(a->compress));
        return -1;
    }
    if (a->resume && !a->checkpoint) {
        fprintf(stderr, "mnist_ring: --resume needs --checkpoint FILE\n");
        return -1;
    }
    if (a->checkpoint_every && !a->checkpoint) {
        fprintf(stderr, "mnist_ring: --checkpoint-every needs --checkpoint FILE\n");
        return -1;
    }
    if (a->min_ranks > 1 && !a->elastic) {
        fprintf(stderr, "mnist_ring: --min-ranks needs --elastic\n");
        return -1;
    }
    if (a->min_ranks > 1 && !a->init_method && !a->peers &&
        a->min_ranks > (unsigned)(a->nproc > 1 ? a->nproc : 1)) {
        mr_args_min_ranks_too_many(a->min_ranks, a->nproc > 1 ? a->nproc : 1);
        return -1;
    }
    if (a->min_ranks > 1 && a->init_method && !strncmp(a->init_method, "tcp://", 6) &&
        a->world >= 1 && a->min_ranks > (unsigned)a->world) {
        mr_args_min_ranks_too_many(a->min_ranks, a->world);
        return -1;
    }
    if ((a->nproc > 0) + (a->init_method != NULL) + (a->peers != NULL) > 1) {
        fprintf(stderr, "mnist_ring: use one of --nproc, --init-method and --peers\n");
        return -1;
    }
    if (a->peers) {
        if (a->rank < 0) {
            fprintf(stderr, "mnist_ring: --peers needs --rank R (this process's line of the table)\n");
            return -1;
        }
        return 0;
    }
    if (a->init_method && !strncmp(a->init_method, "tcp://", 6)) {
        if (strchr(a->init_method, ',') && !a->elastic) {
            /* a fixed job has one rendezvous: the rest would go unused */
            fprintf(stderr, "mnist_ring: --init-method '%s': a list of rendezvous addresses needs "
                    "--elastic; a fixed job takes one, tcp://HOST:PORT\n", a->init_method);
            return -1;
        }
        if (a->rank < 0 || a->world < 1 || a->rank >= a->world) {
            fprintf(stderr, "mnist_ring: --init-method tcp:// needs --rank R and --world-size N with 0 <= R < N\n");
            return -1;
        }
    } else if (a->init_method && strcmp(a->init_method, "env://") != 0) {
        fprintf(stderr, "mnist_ring: --init-method '%s': want tcp://HOST:PORT or env://\n", a->init_method);
        return -1;
    } else if (!a->init_method && (a->rank >= 0 || a->world >= 0)) {
        fprintf(stderr, "mnist_ring: --rank/--world-size need --init-method tcp://HOST:PORT or --peers FILE\n");
        return -1;
    }
    return 0;
}
