/* tinyring: the elastic ring's membership messages and the coordinator's
 * decision (see tr_elastic.h). */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_elastic.h"

#include "tr_error.h"
#include "tr_util.h"

static const uint8_t magic[4] = { 'T', 'R', 'E', '1' };

/* ---- encoding ----------------------------------------------------------- */

static uint32_t body_bytes(uint32_t type, uint32_t n_view)
{
    switch (type) {
    case TR_EL_JOIN:  return TR_EL_JOIN_BYTES;
    case TR_EL_REPLY: return TR_EL_REPLY_BYTES;
    case TR_EL_ABORT: return TR_EL_ABORT_BYTES;
    case TR_EL_VIEW:
        if (n_view < 1 || n_view > TR_EL_MAX_MEMBERS)
            return 0;
        return TR_EL_VIEW_BYTES(n_view);
    default:          return 0;
    }
}

size_t tr_el_size(const struct tr_el_msg *m)
{
    uint32_t b = body_bytes(m->type, m->type == TR_EL_VIEW ? m->view.n : 0);
    return b ? TR_EL_HEAD_BYTES + b : 0;
}

/* 4 address bytes as they are in memory (already network order). */
static void put_addr(uint8_t *p, uint32_t a)
{
    const uint8_t *s = (const uint8_t *)&a;
    p[0] = s[0]; p[1] = s[1]; p[2] = s[2]; p[3] = s[3];
}

static uint32_t get_addr(const uint8_t *p)
{
    uint32_t a;
    uint8_t *d = (uint8_t *)&a;
    d[0] = p[0]; d[1] = p[1]; d[2] = p[2]; d[3] = p[3];
    return a;
}

static void put_body(const struct tr_el_brief *m, const struct tr_el_member *mem, uint8_t *b)
{
    uint32_t i;
    switch (m->type) {
    case TR_EL_JOIN:
        tr_put_le32(b, m->join.rank);
        tr_put_le32(b + 4, m->join.flags);
        tr_put_le64(b + 8, m->join.step);
        put_addr(b + 16, m->join.addr);
        tr_put_le16(b + 20, m->join.port);
        tr_put_le16(b + 22, 0);
        break;
    case TR_EL_REPLY:
        tr_put_le32(b, m->answer);
        tr_put_le32(b + 4, m->coord);
        break;
    case TR_EL_ABORT:
        tr_put_le32(b, m->abort.reason);
        tr_put_le32(b + 4, m->abort.joined);
        tr_put_le32(b + 8, m->abort.previous);
        tr_put_le32(b + 12, m->abort.min_ranks);
        tr_put_le64(b + 16, m->abort.step);
        tr_put_le32(b + 24, m->abort.source);
        tr_put_le32(b + 28, 0);
        break;
    default:   /* TR_EL_VIEW */
        tr_put_le32(b, m->n);
        tr_put_le32(b + 4, m->source);
        tr_put_le64(b + 8, m->step);
        for (i = 0; i < m->n; i++) {
            uint8_t *e = b + 16 + 12 * i;
            tr_put_le32(e, mem[i].rank);
            put_addr(e + 4, mem[i].addr);
            tr_put_le16(e + 8, mem[i].port);
            tr_put_le16(e + 10, 0);
        }
        break;
    }
}

size_t tr_el_encode_brief(const struct tr_el_brief *m, const struct tr_el_member *members,
                          uint8_t *out, size_t cap)
{
    uint32_t b = body_bytes(m->type, m->n);
    if (!b || cap < TR_EL_HEAD_BYTES + b || (m->type == TR_EL_VIEW && !members))
        return 0;
    out[0] = magic[0]; out[1] = magic[1]; out[2] = magic[2]; out[3] = magic[3];
    tr_put_le16(out + 4, TR_EL_VERSION);
    tr_put_le16(out + 6, (uint16_t)m->type);
    tr_put_le64(out + 8, m->token);
    tr_put_le32(out + 16, m->epoch);
    tr_put_le32(out + 20, b);
    put_body(m, members, out + TR_EL_HEAD_BYTES);
    return TR_EL_HEAD_BYTES + b;
}

/* m's head and the body of its type as a brief (a view's members stay
 * where they are); only the fields of m's type are read. */
static void to_brief(const struct tr_el_msg *m, struct tr_el_brief *b)
{
    b->type = m->type;
    b->token = m->token;
    b->epoch = m->type == TR_EL_VIEW ? m->view.epoch : m->epoch;
    b->n = 0;
    if (m->type == TR_EL_JOIN)
        b->join = m->join;
    else if (m->type == TR_EL_REPLY) {
        b->answer = m->answer;
        b->coord = m->coord;
    } else if (m->type == TR_EL_ABORT)
        b->abort = m->abort;
    else if (m->type == TR_EL_VIEW) {
        b->n = m->view.n;
        b->source = m->view.source;
        b->step = m->view.step;
    }
}

size_t tr_el_encode(const struct tr_el_msg *m, uint8_t *out, size_t cap)
{
    struct tr_el_brief b;
    to_brief(m, &b);
    return tr_el_encode_brief(&b, m->view.m, out, cap);
}

/* ---- decoding ----------------------------------------------------------- */

int tr_el_prefix_ok(const uint8_t *in, size_t n)
{
    size_t i;
    for (i = 0; i < n && i < 4; i++)
        if (in[i] != magic[i])
            return 0;
    return 1;
}

int tr_el_head_total(const uint8_t *in, size_t *total)
{
    uint32_t type, b;
    if (!tr_el_prefix_ok(in, 4) || tr_get_le16(in + 4) != TR_EL_VERSION)
        return TR_ERR_PROTO;
    type = tr_get_le16(in + 6);
    b = tr_get_le32(in + 20);
    switch (type) {
    case TR_EL_JOIN:  if (b != TR_EL_JOIN_BYTES) return TR_ERR_PROTO; break;
    case TR_EL_REPLY: if (b != TR_EL_REPLY_BYTES) return TR_ERR_PROTO; break;
    case TR_EL_ABORT: if (b != TR_EL_ABORT_BYTES) return TR_ERR_PROTO; break;
    case TR_EL_VIEW:
        if (b < TR_EL_VIEW_BYTES(1) || b > TR_EL_VIEW_BYTES(TR_EL_MAX_MEMBERS) ||
            (b - 16u) % 12u != 0)
            return TR_ERR_PROTO;
        break;
    default:
        return TR_ERR_PROTO;
    }
    *total = TR_EL_HEAD_BYTES + b;
    return 0;
}

static int get_view(const uint8_t *b, uint32_t len, struct tr_el_brief *v,
                    struct tr_el_member *mem, uint32_t cap)
{
    uint32_t i;
    v->n = tr_get_le32(b);
    v->source = tr_get_le32(b + 4);
    v->step = tr_get_le64(b + 8);
    if (v->n < 1 || v->n > TR_EL_MAX_MEMBERS || len != TR_EL_VIEW_BYTES(v->n) ||
        v->source >= v->n)
        return TR_ERR_PROTO;
    if (v->n > cap)
        return TR_ERR_NOMEM;
    for (i = 0; i < v->n; i++) {
        const uint8_t *e = b + 16 + 12 * i;
        mem[i].rank = tr_get_le32(e);
        mem[i].addr = get_addr(e + 4);
        mem[i].port = tr_get_le16(e + 8);
        if (tr_get_le16(e + 10) != 0 || (i > 0 && mem[i].rank <= mem[i - 1].rank))
            return TR_ERR_PROTO;
    }
    return 0;
}

static int get_body(const uint8_t *b, uint32_t len, struct tr_el_brief *m,
                    struct tr_el_member *mem, uint32_t cap)
{
    switch (m->type) {
    case TR_EL_JOIN:
        m->join.rank = tr_get_le32(b);
        m->join.flags = tr_get_le32(b + 4);
        m->join.step = tr_get_le64(b + 8);
        m->join.addr = get_addr(b + 16);
        m->join.port = tr_get_le16(b + 20);
        return (m->join.flags & ~TR_EL_JOINER) || tr_get_le16(b + 22) ? TR_ERR_PROTO : 0;
    case TR_EL_REPLY:
        m->answer = tr_get_le32(b);
        m->coord = tr_get_le32(b + 4);
        return m->answer > TR_EL_STALE ? TR_ERR_PROTO : 0;
    case TR_EL_ABORT:
        m->abort.reason = tr_get_le32(b);
        m->abort.joined = tr_get_le32(b + 4);
        m->abort.previous = tr_get_le32(b + 8);
        m->abort.min_ranks = tr_get_le32(b + 12);
        m->abort.step = tr_get_le64(b + 16);
        m->abort.source = tr_get_le32(b + 24);
        return (m->abort.reason != TR_EL_NO_MAJORITY && m->abort.reason != TR_EL_BELOW_MIN) ||
               tr_get_le32(b + 28) ? TR_ERR_PROTO : 0;
    default:
        return get_view(b, len, m, mem, cap);
    }
}

int tr_el_decode_brief(const uint8_t *in, size_t n, struct tr_el_brief *m,
                       struct tr_el_member *members, uint32_t cap)
{
    size_t total;
    if (n < TR_EL_HEAD_BYTES || tr_el_head_total(in, &total) < 0 || total != n)
        return TR_ERR_PROTO;
    m->type = tr_get_le16(in + 6);
    m->token = tr_get_le64(in + 8);
    m->epoch = tr_get_le32(in + 16);
    return get_body(in + TR_EL_HEAD_BYTES, (uint32_t)(n - TR_EL_HEAD_BYTES), m, members, cap);
}

int tr_el_decode(const uint8_t *in, size_t n, struct tr_el_msg *m)
{
    struct tr_el_brief b;
    int rc = tr_el_decode_brief(in, n, &b, m->view.m, TR_EL_MAX_MEMBERS);
    if (rc < 0)
        return rc;
    m->type = b.type;
    m->token = b.token;
    m->epoch = b.epoch;
    if (b.type == TR_EL_JOIN)
        m->join = b.join;
    else if (b.type == TR_EL_REPLY) {
        m->answer = b.answer;
        m->coord = b.coord;
    } else if (b.type == TR_EL_ABORT)
        m->abort = b.abort;
    else {
        m->view.epoch = b.epoch;
        m->view.n = b.n;
        m->view.source = b.source;
        m->view.step = b.step;
    }
    return 0;
}

/* ---- views and the decision --------------------------------------------- */

int tr_el_view_initial(struct tr_el_view *v, uint32_t world, const uint32_t *addr,
                       const uint16_t *port)
{
    uint32_t i;
    if (world < 1 || world > TR_EL_MAX_MEMBERS)
        return TR_ERR_INVAL;
    v->epoch = 0;
    v->n = world;
    v->source = 0;
    v->step = 0;
    for (i = 0; i < world; i++) {
        v->m[i].rank = i;
        v->m[i].addr = addr ? addr[i] : 0;
        v->m[i].port = port ? port[i] : 0;
    }
    return 0;
}

void tr_el_config_defaults(uint32_t *timeout_ms, uint32_t *handshake_ms, unsigned *min_ranks)
{
    if (!*timeout_ms)
        *timeout_ms = TR_EL_DEFAULT_TIMEOUT_MS;
    if (!*handshake_ms)
        *handshake_ms = TR_EL_DEFAULT_HANDSHAKE_MS;
    if (!*min_ranks)
        *min_ranks = 1;
}

int tr_el_view_index(const struct tr_el_view *v, uint32_t rank)
{
    return tr_el_member_index(v->m, v->n, rank);
}

int tr_el_member_index(const struct tr_el_member *m, uint32_t n, uint32_t rank)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        if (m[i].rank == rank)
            return (int)i;
    return -1;
}

/* Checks joined[] against the rules of tr_el_decide; counts the previous
 * members (prev[0..prev_n)) among them and picks the latest state. */
static int tally(const struct tr_el_member *prev, uint32_t prev_n,
                 const struct tr_el_join *joined, unsigned n, unsigned *members,
                 int *lowest_in, struct tr_el_abort *why)
{
    unsigned i, k;
    *members = 0;
    *lowest_in = 0;
    why->step = 0;
    why->source = TR_EL_NO_RANK;
    if (n > TR_EL_MAX_MEMBERS)
        return TR_ERR_INVAL;
    for (i = 0; i < n; i++) {
        const struct tr_el_join *j = &joined[i];
        int in_prev = tr_el_member_index(prev, prev_n, j->rank) >= 0;
        for (k = 0; k < i; k++)
            if (joined[k].rank == j->rank)
                return TR_ERR_INVAL;
        if (in_prev == ((j->flags & TR_EL_JOINER) != 0))
            return TR_ERR_INVAL;     /* a joiner that is a member, or a stranger */
        if (!in_prev)
            continue;
        (*members)++;
        if (j->rank == prev[0].rank)
            *lowest_in = 1;
        if (why->source == TR_EL_NO_RANK || j->step > why->step ||
            (j->step == why->step && j->rank < why->source)) {
            why->step = j->step;
            why->source = j->rank;
        }
    }
    return 0;
}

/* next: every JOIN in ascending rank (insertion sort: n is small). */
static void form(const struct tr_el_join *joined, unsigned n, uint32_t source_rank,
                 struct tr_el_member *next, uint32_t *next_n, uint32_t *next_source)
{
    unsigned i, k;
    *next_n = 0;
    for (i = 0; i < n; i++) {
        struct tr_el_member e;
        e.rank = joined[i].rank;
        e.addr = joined[i].addr;
        e.port = joined[i].port;
        for (k = *next_n; k > 0 && next[k - 1].rank > e.rank; k--)
            next[k] = next[k - 1];
        next[k] = e;
        (*next_n)++;
    }
    *next_source = (uint32_t)tr_el_member_index(next, *next_n, source_rank);
}

int tr_el_decide_brief(const struct tr_el_brief *prev, const struct tr_el_member *prev_m,
                       const struct tr_el_join *joined, unsigned n, unsigned min_ranks,
                       struct tr_el_brief *next, struct tr_el_member *next_m, uint32_t cap,
                       struct tr_el_abort *why)
{
    unsigned members;
    int lowest_in, rc;
    if (prev->n < 1 || n > cap)
        return TR_ERR_INVAL;
    rc = tally(prev_m, prev->n, joined, n, &members, &lowest_in, why);
    if (rc < 0)
        return rc;
    why->joined = members;
    why->previous = prev->n;
    why->min_ranks = min_ranks;
    if (!(2u * members > prev->n || (2u * members == prev->n && lowest_in))) {
        why->reason = TR_EL_NO_MAJORITY;
        return TR_EL_NO_MAJORITY;
    }
    if (n < min_ranks) {
        why->reason = TR_EL_BELOW_MIN;
        return TR_EL_BELOW_MIN;
    }
    next->type = TR_EL_VIEW;
    next->epoch = prev->epoch + 1;
    form(joined, n, why->source, next_m, &next->n, &next->source);
    next->step = why->step;
    why->reason = TR_EL_GO;
    return TR_EL_GO;
}

int tr_el_decide(const struct tr_el_view *prev, const struct tr_el_join *joined, unsigned n,
                 unsigned min_ranks, struct tr_el_view *next, struct tr_el_abort *why)
{
    struct tr_el_brief p, b;
    int rc;
    p.epoch = prev->epoch;
    p.n = prev->n;
    rc = tr_el_decide_brief(&p, prev->m, joined, n, min_ranks, &b, next->m,
                            TR_EL_MAX_MEMBERS, why);
    if (rc == TR_EL_GO) {
        next->epoch = b.epoch;
        next->n = b.n;
        next->source = b.source;
        next->step = b.step;
    }
    return rc;
}

uint64_t tr_el_link_token(uint64_t token, uint32_t epoch)
{
    uint8_t b[12];
    uint64_t h;
    if (epoch == 0)
        return token;
    tr_put_le64(b, token);
    tr_put_le32(b + 8, epoch);
    h = tr_fnv1a64(TR_FNV64_INIT, b, sizeof b);
    return h ? h : 1;
}
