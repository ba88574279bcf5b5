/* mnist_ring: data-parallel MNIST training over a ring allreduce.
 *
 * main: parse the command line, load and validate the data (before any
 * process is started or any file written), then run one rank here, or fork
 * --nproc local ranks and watch them.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "args.h"
#include "elastic.h"
#include "idx.h"
#include "report.h"
#include "train.h"

/* A port the kernel just gave out on 127.0.0.1 (free a moment ago). */
static int free_port(void)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int port = -1, fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

static void describe(char *b, size_t n, int status)
{
    if (WIFSIGNALED(status))
        snprintf(b, n, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(b, n, "exited with status %d", WEXITSTATUS(status));
}

/* The local ranks of --nproc and what became of them. */
struct mr_local {
    int   n, alive;
    pid_t pid[256];      /* 0 once reaped */
    pid_t first[256];    /* as forked, for messages */
    char  stopped[256];  /* --elastic: stopped (SIGSTOP) and not continued since */
    char  ended[256];    /* --elastic: killed by the launcher once the job finished */
};

/* --nproc --elastic: a rank's exit status when it stopped because the job
 * went on without it (mr_elastic_left); between the launcher and its
 * children only. */
#define MR_EXIT_LEFT 3

/* Marks the child p as gone; returns its rank, or -1 if it is not one. */
static int reap(struct mr_local *l, pid_t p)
{
    for (int i = 0; i < l->n; i++) {
        if (l->pid[i] == p) {
            l->pid[i] = 0;
            l->alive--;
            return i;
        }
    }
    return -1;
}

static int failed_status(int status)
{
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void stop_all(struct mr_local *l, int sig)
{
    for (int i = 0; i < l->n; i++)   /* rank 0 first: it reports an interruption */
        if (l->pid[i] > 0)
            kill(l->pid[i], sig);
}

/* The first failure (rank r, status). Its neighbours fail a moment later
 * (their links close) and may be reaped first: gather what dies within
 * 300 ms and blame a rank killed by a signal before one that merely lost a
 * peer. Then stop the others. */
static void report_failure(struct mr_local *l, int r, int status)
{
    int fr[256], fs[256], nf = 0, cause = 0;
    char how[128];
    double end = mr_now() + 0.3;
    fr[nf] = r;
    fs[nf++] = status;
    while (l->alive > 0 && mr_now() < end) {
        pid_t p = waitpid(-1, &status, WNOHANG);
        if (p <= 0) {
            usleep(10000);
            continue;
        }
        if ((r = reap(l, p)) >= 0 && failed_status(status)) {
            fr[nf] = r;
            fs[nf++] = status;
        }
    }
    for (int i = nf - 1; i >= 0; i--)
        if (WIFSIGNALED(fs[i]))
            cause = i;
    describe(how, sizeof how, fs[cause]);
    fprintf(stderr, "mnist_ring: rank %d (pid %ld) %s; stopping the other ranks\n", fr[cause],
            (long)l->first[fr[cause]], how);
    for (int i = 0; i < nf; i++) {
        if (i == cause)
            continue;
        describe(how, sizeof how, fs[i]);
        fprintf(stderr, "mnist_ring: rank %d (pid %ld) %s after that\n", fr[i],
                (long)l->first[fr[i]], how);
    }
    stop_all(l, SIGTERM);
}

/* Interrupted: every rank is told (rank 0 says where training stopped and
 * where the last checkpoint is) and given 10 s to leave, then killed. */
static void stop_interrupted(struct mr_local *l, int sig)
{
    double end = mr_now() + 10;
    stop_all(l, SIGTERM);
    while (l->alive > 0) {
        int status;
        pid_t p = waitpid(-1, &status, WNOHANG);
        if (p > 0) {
            reap(l, p);
        } else if (mr_now() >= end) {
            stop_all(l, SIGKILL);
            end += 3600;
        } else {
            usleep(10000);
        }
    }
    fprintf(stderr, "mnist_ring: interrupted by %s: all %d ranks stopped\n", mr_signal_name(sig),
            l->n);
}

/* Fork the ranks; 0, or -1 with every rank forked so far stopped. */
static int start_ranks(struct mr_local *l, const struct mr_args *a, const struct mr_dataset *train,
                       const struct mr_dataset *test, const char *url, const char *token)
{
    pid_t parent = getpid();
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < l->n; i++) {
        pid_t p = fork();
        if (p < 0) {
            fprintf(stderr, "mnist_ring: --nproc: fork failed: %s\n", strerror(errno));
            stop_all(l, SIGTERM);
            while (wait(NULL) > 0)
                ;
            return -1;
        }
        if (p == 0) {
#ifdef __linux__
            prctl(PR_SET_PDEATHSIG, SIGTERM);  /* never outlive the launcher */
#endif
            if (getppid() != parent)
                _exit(1);
            int rc = mr_train_rank(a, train, test, url, NULL, i, l->n, token);
            _exit(rc != 0 && a->elastic && mr_elastic_left ? MR_EXIT_LEFT : rc);
        }
        l->pid[i] = l->first[i] = p;
        l->alive++;
    }
    return 0;
}

/* --elastic: a rank killed by a signal is a lost rank, the others go on
 * without it, and so is one the job went on without (MR_EXIT_LEFT) or one
 * the launcher ended after the job finished; one that exits 1 failed the
 * job. */
static void elastic_child(const struct mr_local *l, int r, int status, int *finished,
                          int *failed)
{
    char how[128];
    if (!failed_status(status)) {
        (*finished)++;
        return;
    }
    if (l->ended[r])
        return;                 /* said when it was ended */
    if (WIFEXITED(status) && WEXITSTATUS(status) == MR_EXIT_LEFT) {
        fprintf(stderr, "mnist_ring: rank %d (pid %ld) left: the job went on without it\n", r,
                (long)l->first[r]);
        return;
    }
    describe(how, sizeof how, status);
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "mnist_ring: rank %d %s; the elastic ring goes on without it\n", r, how);
        return;
    }
    fprintf(stderr, "mnist_ring: rank %d %s\n", r, how);
    *failed = 1;
}

/* --elastic, once a rank finished (the job is done): a rank still stopped
 * cannot have been in the ring that finished, it is killed now; one still
 * running is given the job's --timeout and 5 s to finish too (a member of
 * the last ring finishes with the others; one the job dropped finds out
 * within --timeout), then killed. */
static void end_dropped(struct mr_local *l, const struct mr_args *a, double t_done)
{
    double grace = a->timeout_s + 5.0;
    for (int i = 0; i < l->n; i++) {
        if (l->pid[i] <= 0 || l->ended[i])
            continue;
        if (l->stopped[i]) {
            fprintf(stderr, "mnist_ring: rank %d (pid %ld) was stopped (frozen) when the job "
                    "finished without it; killed it\n", i, (long)l->first[i]);
        } else if (mr_now() - t_done > grace) {
            fprintf(stderr, "mnist_ring: rank %d (pid %ld) did not finish within %.0f s of the "
                    "others: the job went on without it; killed it\n", i, (long)l->first[i],
                    grace);
        } else {
            continue;
        }
        kill(l->pid[i], SIGKILL);
        l->ended[i] = 1;
    }
}

static int index_of(const struct mr_local *l, pid_t p)
{
    for (int i = 0; i < l->n; i++)
        if (l->pid[i] == p)
            return i;
    return -1;
}

/* --nproc: fork N ranks that meet on 127.0.0.1; the first failure stops all
 * (unless --elastic), so does SIGINT or SIGTERM. */
static int launch_local(const struct mr_args *a, const struct mr_dataset *train,
                        const struct mr_dataset *test)
{
    static struct mr_local l;
    int failed = 0, finished = 0, port = free_port();
    int wflags = WNOHANG | (a->elastic ? WUNTRACED | WCONTINUED : 0);
    double t_done = 0;
    char url[64], token[128];

    if (port < 0) {
        fprintf(stderr, "mnist_ring: --nproc: no free port on 127.0.0.1: %s\n", strerror(errno));
        return 1;
    }
    snprintf(url, sizeof url, "tcp://127.0.0.1:%d", port);
    if (a->job_token)
        snprintf(token, sizeof token, "%s", a->job_token);
    else  /* strangers on this host cannot join by accident */
        snprintf(token, sizeof token, "nproc-%ld-%ld-%d", (long)getpid(), (long)time(NULL), port);
    l.n = a->nproc;
    if (start_ranks(&l, a, train, test, url, token) < 0)
        return 1;
    mr_stop_in_order = 1;
    while (l.alive > 0) {
        int status, r;
        pid_t p;
        if (mr_interrupted) {
            stop_interrupted(&l, mr_interrupted);
            return 128 + mr_interrupted;
        }
        if (finished > 0)
            end_dropped(&l, a, t_done);
        p = waitpid(-1, &status, wflags);
        if (p == 0 || (p < 0 && errno == EINTR)) {
            usleep(20000);   /* a signal cuts it short */
            continue;
        }
        if (p < 0)
            break;
        if (WIFSTOPPED(status) || WIFCONTINUED(status)) {
            if ((r = index_of(&l, p)) >= 0)
                l.stopped[r] = WIFSTOPPED(status) != 0;
            continue;
        }
        r = reap(&l, p);
        if (r >= 0 && a->elastic) {
            elastic_child(&l, r, status, &finished, &failed);
            if (finished > 0 && t_done == 0)
                t_done = mr_now();
        } else if (r >= 0 && failed_status(status) && !failed) {
            report_failure(&l, r, status);
            failed = 1;
        }
    }
    if (a->elastic)     /* the job finished if a rank did and none failed otherwise */
        return finished > 0 && !failed ? 0 : 1;
    return failed ? 1 : 0;
}

static void on_interrupt(int sig)
{
    if (!mr_stop_in_order) {      /* nothing started yet: end as by default */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    mr_interrupted = sig;
}

/* SIGINT and SIGTERM end a run in order once it trains (train.h:
 * mr_interrupted), also in a background job, where a shell leaves SIGINT
 * ignored. SA_RESTART keeps file writes going; poll() returns to the loop
 * that checks the flag. */
static void catch_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* --peers: the table must be sound and hold --rank (and --world-size). */
static int load_peers(const struct mr_args *a, struct mr_peers *p)
{
    char err[1024];
    if (mr_peers_load(p, a->peers, err, sizeof err) < 0) {
        fprintf(stderr, "mnist_ring: %s\n", err);
        return -1;
    }
    if (a->rank >= p->world) {
        fprintf(stderr, "mnist_ring: --rank %d is not in --peers %s (ranks 0..%d)\n", a->rank,
                a->peers, p->world - 1);
        return -1;
    }
    if (a->world >= 1 && a->world != p->world) {
        fprintf(stderr, "mnist_ring: --world-size %d, but --peers %s has %d ranks\n", a->world,
                a->peers, p->world);
        return -1;
    }
    return 0;
}

/* An output file's place, checked before anything trains: its directory
 * exists and the name is not a directory. */
static int check_output(const char *flag, const char *path)
{
    char dir[4096];
    struct stat st;
    const char *slash;
    if (!path)
        return 0;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "mnist_ring: %s %s: is a directory\n", flag, path);
        return -1;
    }
    slash = strrchr(path, '/');
    if (!slash)
        return 0;
    snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "mnist_ring: %s %s: directory %s %s\n", flag, path, dir,
                stat(dir, &st) != 0 ? "does not exist" : "is not a directory");
        return -1;
    }
    return 0;
}

/* Mistakes in the command line that show only against the init method,
 * the --peers table or the file system: exit 2 before the data is read. */
static int check_setup(const struct mr_args *a, const struct mr_peers *peers)
{
    int rank = a->rank, world = -1;
    if (a->init_method) {
        struct tr_posix_config pc;
        char err[512];
        tr_posix_config_default(&pc);
        pc.init_method = a->init_method;
        pc.rank = a->rank;
        pc.world = a->world;
        if (tr_posix_config_check(&pc, &rank, &world, err, sizeof err) < 0) {
            fprintf(stderr, "mnist_ring: --init-method %s: %s\n", a->init_method, err);
            return -1;
        }
    } else if (a->peers) {
        world = peers->world;
    }
    if (world >= 1 && a->min_ranks > (unsigned)world) {
        mr_args_min_ranks_too_many(a->min_ranks, world);
        return -1;
    }
    /* rank 0 writes them (with --elastic whichever rank leads the ring) */
    if (rank <= 0 || a->elastic) {
        if (check_output("--metrics", a->metrics) < 0 ||
            check_output("--save-model", a->save_model) < 0 ||
            check_output("--plot", a->plot) < 0)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static struct mr_peers peers;
    struct mr_args a;
    struct mr_dataset train, test;
    char err[2048], metrics_buf[4096];
    int rc;

    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    rc = mr_args_parse(&a, argc, argv);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (a.plot_from) {
        rc = mr_plot(a.plot_from, a.plot);
        return rc == 0 ? 0 : rc == -2 ? 2 : 1;
    }
    if (a.plot && !a.metrics) {  /* the plot is drawn from the metrics */
        snprintf(metrics_buf, sizeof metrics_buf, "%s.csv", a.plot);
        a.metrics = metrics_buf;
    }
    if (a.peers && load_peers(&a, &peers) < 0)
        return 2;
    if (check_setup(&a, &peers) < 0)
        return 2;
    /* bad data stops everything here: no process started, no file written */
    if (mr_idx_load_dir(a.data, &train, &test, err, sizeof err) < 0) {
        fprintf(stderr, "mnist_ring: data: %s\n", err);
        return 2;
    }
    catch_interrupts();
    if (a.nproc > 1)
        rc = launch_local(&a, &train, &test);
    else if (a.init_method || a.peers)
        rc = mr_train_rank(&a, &train, &test, a.init_method, a.peers ? &peers : NULL, a.rank,
                           a.world, a.job_token);
    else
        rc = mr_train_rank(&a, &train, &test, NULL, NULL, 0, 1, a.job_token);
    mr_dataset_free(&train);
    mr_dataset_free(&test);
    return rc;
}
