/*
 * Native strace scanner: the same state machine as _reference.py, in C.
 *
 * Parser(pid_mode, ts_mode, fixed_pid).feed(bytes) takes blocks of whole
 * lines; finish() returns a dict of raw columns as buffer objects (int32 /
 * int64 arrays, times as float64 seconds; string columns as Arrow
 * large_string offsets, data and validity bitmap), never Python strings
 * per row. Split calls are joined in
 * the same pass through a pid -> pending-row map that lives across blocks.
 * Text is latin-1 in, UTF-8 out (as the reference decodes and Arrow encodes).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#include <pthread.h>
#include <unistd.h>
#endif

#define NA INT64_MIN
#define DAY_NS 86400000000000LL
#define HALF_DAY_NS 43200000000000LL
enum { K_CALL, K_UNFINISHED, K_SIGNAL, K_STOPPED, K_EXIT, K_KILLED, K_SUPERSEDED };
enum { TS_NONE, TS_TOD, TS_EPOCH, TS_REL };
enum { PID_NONE, PID_COLUMN, PID_FIXED };

/* ------------------------------------------------------------------ blobs */
typedef struct {
    PyObject_HEAD
    char *p;
    Py_ssize_t n;
} Blob;

static char blob_empty[8];
/* writable: a frame's columns are views of these buffers and pandas writes into them in place */
static int blob_getbuffer(Blob *self, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)self, self->p ? self->p : blob_empty, self->n, 0, flags);
}
static void blob_dealloc(Blob *self) {
    free(self->p);
    Py_TYPE(self)->tp_free((PyObject *)self);
}
static PyBufferProcs blob_as_buffer = {(getbufferproc)blob_getbuffer, NULL};
static PyTypeObject BlobType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "workbench.syscalls._native.Blob",
    .tp_basicsize = sizeof(Blob),
    .tp_dealloc = (destructor)blob_dealloc,
    .tp_as_buffer = &blob_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "read-only bytes owned by the scanner",
};
static PyObject *blob_new(char *p, Py_ssize_t n) { /* takes ownership of p */
    Blob *b = PyObject_New(Blob, &BlobType);
    if (!b) { free(p); return NULL; }
    b->p = p;
    b->n = n;
    return (PyObject *)b;
}

/* Parser.feed runs without the GIL (two scanners can work on two halves of a
 * file at once); the rare calls into Python below take it back. */
static void nomem(void) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyErr_NoMemory();
    PyGILState_Release(g);
}

/* --------------------------------------------------------- growable array */
typedef struct { char *p; size_t n, cap; } vec_t;
static int vec_reserve(vec_t *v, size_t extra) {
    if (v->n + extra <= v->cap) return 0;
    size_t cap = v->cap ? v->cap : 4096;
    while (cap < v->n + extra) cap *= 2;
    char *q = realloc(v->p, cap);
    if (!q) { nomem(); return -1; }
    v->p = q;
    v->cap = cap;
    return 0;
}
#define VEC_PUSH(v, T, x) (vec_reserve(&(v), sizeof(T)) ? -1 : (((T *)((v).p))[(v).n / sizeof(T)] = (x), (v).n += sizeof(T), 0))
#define VEC_AT(v, T, i) (((T *)((v).p))[i])

/* ------------------------------------------------------------- hash maps */
typedef struct { int64_t *keys; int64_t *vals; uint8_t *used; size_t cap, count, tomb; } imap_t;
#define USED 1
#define TOMB 2
static size_t ihash(int64_t k, size_t cap) { return (size_t)(((uint64_t)k * 0x9E3779B97F4A7C15ULL) >> 7) & (cap - 1); }
static int imap_put(imap_t *m, int64_t k, int64_t v);
static int imap_grow(imap_t *m) {
    imap_t o = *m;
    size_t cap = o.cap ? o.cap * 2 : 64;
    if (o.cap && o.count * 4 < o.cap) cap = o.cap; /* only tombstones: rehash in place size */
    m->keys = calloc(cap, sizeof(int64_t));
    m->vals = calloc(cap, sizeof(int64_t));
    m->used = calloc(cap, 1);
    if (!m->keys || !m->vals || !m->used) { nomem(); return -1; }
    m->cap = cap; m->count = 0; m->tomb = 0;
    for (size_t i = 0; i < o.cap; i++)
        if (o.used[i] == USED) imap_put(m, o.keys[i], o.vals[i]);
    free(o.keys); free(o.vals); free(o.used);
    return 0;
}
static int imap_put(imap_t *m, int64_t k, int64_t v) {
    if ((m->count + m->tomb + 1) * 2 > m->cap && imap_grow(m)) return -1;
    size_t i = ihash(k, m->cap);
    long first_tomb = -1;
    while (m->used[i]) {
        if (m->used[i] == USED && m->keys[i] == k) { m->vals[i] = v; return 0; }
        if (m->used[i] == TOMB && first_tomb < 0) first_tomb = (long)i;
        i = (i + 1) & (m->cap - 1);
    }
    if (first_tomb >= 0) { i = (size_t)first_tomb; m->tomb--; }
    m->used[i] = USED; m->keys[i] = k; m->vals[i] = v; m->count++;
    return 0;
}
static long imap_find(imap_t *m, int64_t k) {
    if (!m->cap) return -1;
    size_t i = ihash(k, m->cap);
    while (m->used[i]) {
        if (m->used[i] == USED && m->keys[i] == k) return (long)i;
        i = (i + 1) & (m->cap - 1);
    }
    return -1;
}
static int64_t imap_pop(imap_t *m, int64_t k, int64_t dflt) {
    long i = imap_find(m, k);
    if (i < 0) return dflt;
    m->used[i] = TOMB; m->count--; m->tomb++;
    return m->vals[i];
}
static void imap_free(imap_t *m) { free(m->keys); free(m->vals); free(m->used); memset(m, 0, sizeof(*m)); }

/* string interning: first-appearance codes */
typedef struct { char **names; size_t *lens; size_t n, cap; int32_t *slots; size_t nslots; int32_t last; } intern_t;
static uint64_t shash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 1099511628211ULL; }
    return h;
}
static int32_t intern(intern_t *t, const char *s, size_t n) {
    if (t->n && t->lens[t->last] == n && memcmp(t->names[t->last], s, n) == 0) return t->last;
    if ((t->n + 1) * 2 > t->nslots) {
        size_t ns = t->nslots ? t->nslots * 2 : 256;
        int32_t *sl = malloc(ns * sizeof(int32_t));
        if (!sl) { nomem(); return -2; }
        for (size_t i = 0; i < ns; i++) sl[i] = -1;
        for (size_t c = 0; c < t->n; c++) {
            size_t i = shash(t->names[c], t->lens[c]) & (ns - 1);
            while (sl[i] >= 0) i = (i + 1) & (ns - 1);
            sl[i] = (int32_t)c;
        }
        free(t->slots); t->slots = sl; t->nslots = ns;
    }
    size_t i = shash(s, n) & (t->nslots - 1);
    while (t->slots[i] >= 0) {
        int32_t c = t->slots[i];
        if (t->lens[c] == n && memcmp(t->names[c], s, n) == 0) return t->last = c;
        i = (i + 1) & (t->nslots - 1);
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        char **nm = realloc(t->names, cap * sizeof(char *));
        if (!nm) { nomem(); return -2; }
        t->names = nm;
        size_t *ln = realloc(t->lens, cap * sizeof(size_t));
        if (!ln) { nomem(); return -2; }
        t->lens = ln; t->cap = cap;
    }
    char *cp = malloc(n + 1);
    if (!cp) { nomem(); return -2; }
    memcpy(cp, s, n); cp[n] = 0;
    t->names[t->n] = cp; t->lens[t->n] = n;
    t->slots[i] = (int32_t)t->n;
    t->last = (int32_t)t->n;
    return (int32_t)t->n++;
}
static void intern_free(intern_t *t) {
    for (size_t i = 0; i < t->n; i++) free(t->names[i]);
    free(t->names); free(t->lens); free(t->slots); memset(t, 0, sizeof(*t));
}
static PyObject *intern_list(intern_t *t) {
    PyObject *l = PyList_New((Py_ssize_t)t->n);
    if (!l) return NULL;
    for (size_t i = 0; i < t->n; i++) {
        PyObject *s = PyUnicode_DecodeLatin1(t->names[i], (Py_ssize_t)t->lens[i], NULL);
        if (!s) { Py_DECREF(l); return NULL; }
        PyList_SET_ITEM(l, (Py_ssize_t)i, s);
    }
    return l;
}

/* ------------------------------------------------------------ the parser */
typedef struct { int64_t off, len; } span_t; /* off = segment << 32 | offset; len < 0: null */

/* Strings live in segments of SEG_SIZE bytes (bigger for a longer string). Each
 * segment remembers the highest row that points into it, so the final gather,
 * which walks the rows in order, returns segments to the system as soon as it is
 * past them: peak memory is about one copy of the strings, not two. */
#define SEG_SIZE ((size_t)8 << 20)
typedef struct { char *p; size_t n, cap; int64_t first_row, last_row; } seg_t; /* lowest, highest row in it */

/* Segments given back while scanning go to a small pool shared by all scanners
 * (several threads feed at once): the next segment reuses pages already
 * mapped instead of faulting in and zeroing new ones, which costs as much as
 * the scan itself on some virtual machines. finish() empties the pool. */
#define SEG_POOL 32
static pthread_mutex_t seg_lock = PTHREAD_MUTEX_INITIALIZER;
static char *seg_pool[SEG_POOL];
static int seg_pooled = 0;

static void seg_pool_trim(void) {
    for (;;) {
        char *q = NULL;
        pthread_mutex_lock(&seg_lock);
        if (seg_pooled) q = seg_pool[--seg_pooled];
        pthread_mutex_unlock(&seg_lock);
        if (!q) return;
#ifdef MAP_ANONYMOUS
        munmap(q, SEG_SIZE);
#else
        free(q);
#endif
    }
}

static char *seg_alloc(size_t n) {
    if (n == SEG_SIZE) {
        char *q = NULL;
        pthread_mutex_lock(&seg_lock);
        if (seg_pooled) q = seg_pool[--seg_pooled];
        pthread_mutex_unlock(&seg_lock);
        if (q) return q;
    }
#ifdef MAP_ANONYMOUS
    /* populated at once: a segment is filled to the end (but the last), and one call that maps 2,048 pages
     * costs far less than 2,048 page faults */
    void *q = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (q == MAP_FAILED) return NULL;
    return (char *)q;
#else
    return malloc(n);
#endif
}
/* a segment straight back to the system (the final gather: the pool would only raise the peak) */
static void seg_unmap(seg_t *g) {
    if (!g->p) return;
#ifdef MAP_ANONYMOUS
    munmap(g->p, g->cap);
#else
    free(g->p);
#endif
    g->p = NULL;
}
/* a segment back to the pool when it has room (standard-size segments only), else to the system */
static void seg_free(seg_t *g) {
    int kept = 0;
    if (!g->p) return;
    if (g->cap == SEG_SIZE) {
        pthread_mutex_lock(&seg_lock);
        if (seg_pooled < SEG_POOL) { seg_pool[seg_pooled++] = g->p; kept = 1; }
        pthread_mutex_unlock(&seg_lock);
    }
    if (kept) g->p = NULL;
    else seg_unmap(g);
}

typedef struct {
    PyObject_HEAD
    int pid_mode, ts_mode;
    int64_t fixed_pid, lineno, nrows;
    vec_t kind, pid, ts, end, dur, name, retval, errno_, signal, line; /* columns */
    vec_t args, ret, stack;                                             /* span_t per row */
    seg_t *segs; size_t nsegs, capsegs;                                 /* string bytes, UTF-8 */
    intern_t names, errnos, signals;
    PyObject *messages, *rejects, *summary;
    int in_summary;
    imap_t pending, live, announced;
    vec_t unknown_rows;
    int64_t last_row, day_off, last_ts, rel_sum;
    int leader_known;
    int64_t leader_pid; /* the pid unknown rows were given when it became known */
    char *splice; size_t splice_n; int64_t splice_line; int has_splice;
    int finished;
    int colour_block;
    PyObject *colour; /* (line, text) of the first line with a colour escape */
    vec_t orig;       /* per row: 0, 1 call line left <unfinished ...>, 2 orphan <... resumed>, 3 same, pending again */
    int64_t first_tod; /* raw time of day of the first -t/-tt stamp (before roll-over), NA if none */
    int64_t orphan_frames;
    int drained;       /* drain() has run: the columns' pages past the rows kept are in memory already */
} Parser;


/* room for `need` bytes for row `row`: returns the destination, sets *off */
static char *heap_room(Parser *p, size_t need, int64_t row, int64_t *off) {
    seg_t *g = p->nsegs ? &p->segs[p->nsegs - 1] : NULL;
    if (!g || g->cap - g->n < need) {
        if (p->nsegs == p->capsegs) {
            size_t c = p->capsegs ? p->capsegs * 2 : 64;
            seg_t *ns = realloc(p->segs, c * sizeof(seg_t));
            if (!ns) { nomem(); return NULL; }
            p->segs = ns;
            p->capsegs = c;
        }
        size_t cap = need > SEG_SIZE ? need : SEG_SIZE;
        char *q = seg_alloc(cap);
        if (!q) { nomem(); return NULL; }
        g = &p->segs[p->nsegs++];
        g->p = q; g->n = 0; g->cap = cap; g->first_row = INT64_MAX; g->last_row = -1;
    }
    if (row > g->last_row) g->last_row = row;
    if (row < g->first_row) g->first_row = row;
    *off = ((int64_t)(p->nsegs - 1) << 32) | (int64_t)g->n;
    return g->p + g->n;
}
static char *span_ptr(Parser *p, span_t sp) { return p->segs[sp.off >> 32].p + (sp.off & 0xffffffffLL); }
/* row `row` now points at `sp` too: its segment's row range covers it */
static void seg_cover(Parser *p, span_t sp, int64_t row) {
    if (sp.len < 0) return;
    seg_t *g = &p->segs[sp.off >> 32];
    if (row < g->first_row) g->first_row = row;
    if (row > g->last_row) g->last_row = row;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }
static int is_errch(char c) { return (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_'; }
static int is_namech(char c) { return (c >= 'a' && c <= 'z') || is_errch(c); }

static int starts(const char *s, size_t n, size_t i, const char *lit) {
    size_t k = strlen(lit);
    return i + k <= n && memcmp(s + i, lit, k) == 0;
}
static int ends(const char *s, size_t n, const char *lit) {
    size_t k = strlen(lit);
    return n >= k && memcmp(s + n - k, lit, k) == 0;
}

/* copy latin-1 text into the heap as UTF-8 for row `row`; returns the span */
static int heap_put2(Parser *p, int64_t row, const char *a, size_t na, const char *b, size_t nb, span_t *out) {
    int64_t off;
    char *d = heap_room(p, 2 * (na + nb), row, &off);
    if (!d) return -1;
    char *d0 = d;
    for (int part = 0; part < 2; part++) {
        const unsigned char *s = (const unsigned char *)(part ? b : a);
        size_t n = part ? nb : na;
        size_t i = 0;
        /* ASCII prefix: copied as is, 8 bytes at a time */
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ULL) break;
            memcpy(d, &w, 8);
            d += 8;
            i += 8;
        }
        for (; i < n; i++) {
            unsigned char c = s[i];
            if (c < 0x80) *d++ = (char)c;
            else { *d++ = (char)(0xC0 | (c >> 6)); *d++ = (char)(0x80 | (c & 0x3F)); }
        }
    }
    out->off = off;
    out->len = (int64_t)(d - d0);
    p->segs[p->nsegs - 1].n += (size_t)(d - d0);
    return 0;
}
static int heap_put(Parser *p, int64_t row, const char *a, size_t na, span_t *out) {
    return heap_put2(p, row, a, na, NULL, 0, out);
}
/* new span = old span's bytes (already UTF-8) + sep + latin-1 text */
static int heap_extend(Parser *p, int64_t row, span_t *sp, const char *sep, size_t nsep, const char *s, size_t n) {
    if (sp->len >= 0 && n == 0 && nsep == 0) return 0; /* nothing to add (most <... resumed>) halves): no copy */
    seg_t *g = p->nsegs ? &p->segs[p->nsegs - 1] : NULL;
    if (sp->len >= 0 && g && (sp->off >> 32) == (int64_t)(p->nsegs - 1) &&
        (size_t)(sp->off & 0xffffffffLL) + (size_t)sp->len == g->n && g->cap - g->n >= 2 * (n + nsep)) {
        span_t t; /* at the end of the last segment, with room: grow in place */
        if (heap_put2(p, row, sep, nsep, s, n, &t)) return -1;
        sp->len += t.len;
        return 0;
    }
    size_t old = sp->len > 0 ? (size_t)sp->len : 0;
    int64_t off;
    char *d = heap_room(p, old + 2 * (n + nsep), row, &off);
    if (!d) return -1;
    if (old) memcpy(d, span_ptr(p, *sp), old);
    p->segs[p->nsegs - 1].n += old;
    span_t t;
    if (heap_put2(p, row, sep, nsep, s, n, &t)) return -1;
    sp->off = off;
    sp->len = (int64_t)old + t.len;
    return 0;
}

static PyObject *latin1(const char *s, size_t n) { return PyUnicode_DecodeLatin1(s, (Py_ssize_t)n, NULL); }

static int add_reject(Parser *p, int64_t ln, const char *s, size_t n, const char *reason) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *t = Py_BuildValue("(LNs)", (long long)ln, latin1(s, n), reason);
    int r = t ? PyList_Append(p->rejects, t) : -1;
    Py_XDECREF(t);
    if (!r && strcmp(reason, "stack frame before any record") == 0) p->orphan_frames++;
    PyGILState_Release(g);
    return r;
}
static int add_pair(PyObject *list, int64_t ln, const char *s, size_t n) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *t = Py_BuildValue("(LN)", (long long)ln, latin1(s, n));
    int r = t ? PyList_Append(list, t) : -1;
    Py_XDECREF(t);
    PyGILState_Release(g);
    return r;
}

static int64_t new_row(Parser *p, int kind, int64_t pid, int64_t ts, int64_t ln, int32_t name,
                       const char *args, size_t nargs, int32_t signal) {
    span_t a, null = {0, -1};
    int64_t r = p->nrows;
    if (heap_put(p, r, args, nargs, &a)) return -1;
    if (VEC_PUSH(p->kind, int32_t, kind) || VEC_PUSH(p->pid, int64_t, pid) || VEC_PUSH(p->ts, int64_t, ts) ||
        VEC_PUSH(p->end, int64_t, ts) || VEC_PUSH(p->dur, int64_t, NA) || VEC_PUSH(p->name, int32_t, name) ||
        VEC_PUSH(p->args, span_t, a) || VEC_PUSH(p->ret, span_t, null) || VEC_PUSH(p->retval, int64_t, NA) ||
        VEC_PUSH(p->errno_, int32_t, -1) || VEC_PUSH(p->signal, int32_t, signal) ||
        VEC_PUSH(p->stack, span_t, null) || VEC_PUSH(p->line, int64_t, ln) || VEC_PUSH(p->orig, uint8_t, 0))
        return -1;
    if (pid == NA && p->pid_mode == PID_NONE && VEC_PUSH(p->unknown_rows, int64_t, r)) return -1;
    p->nrows++;
    p->last_row = r;
    return r;
}

/* ---- tokenizer functions (mirror _reference.py exactly) ---- */
static long skip_string(const char *s, long n, long i) {
    i += 1;
    while (i < n) {
        char c = s[i];
        if (c == '\\') { i += 2; continue; }
        if (c == '"') return i + 1;
        i += 1;
    }
    return -1;
}
static long skip_angle(const char *s, long n, long i) {
    int depth = 0;
    while (i < n) {
        char c = s[i];
        if (c == '<') depth++;
        else if (c == '>') { depth--; if (depth == 0) return i + 1; }
        else if (c == '"') { i = skip_string(s, n, i); if (i < 0) return -1; continue; }
        else if (c == '\\') { i += 2; continue; }
        else if (c == '[') {
            long j = i + 1;
            while (j < n && s[j] != ']') {
                if (s[j] == '"') { j = skip_string(s, n, j); if (j < 0) return -1; continue; }
                j++;
            }
            if (j >= n) return -1;
            i = j;
        }
        i++;
    }
    return -1;
}
static long skip_paren(const char *s, long n, long i) {
    int depth = 0;
    while (i < n) {
        char c = s[i];
        if (c == '(') depth++;
        else if (c == ')') { depth--; if (depth == 0) return i + 1; }
        else if (c == '"') { i = skip_string(s, n, i); if (i < 0) return -1; continue; }
        else if (c == '<') { long j = skip_angle(s, n, i); if (j > 0) { i = j; continue; } }
        i++;
    }
    return -1;
}
static int64_t digits_val(const char *s, long a, long b) { /* wrapping, like int() mod 2**64 */
    uint64_t v = 0;
    for (long i = a; i < b; i++) v = v * 10u + (uint64_t)(s[i] - '0');
    return (int64_t)v;
}
static const uint64_t POW10[10] = {1000000000ULL, 100000000ULL, 10000000ULL, 1000000ULL, 100000ULL,
                                    10000ULL, 1000ULL, 100ULL, 10ULL, 1ULL};
static int64_t frac_ns(const char *s, long ia, long ib, long fa, long fb) {
    uint64_t v = (uint64_t)digits_val(s, ia, ib) * 1000000000ULL;
    if (fb > fa) v += (uint64_t)digits_val(s, fa, fb) * POW10[fb - fa]; /* callers keep fb - fa <= 9 */
    return (int64_t)v;
}
static int64_t parse_retval(const char *s, long a, long b) {
    if (b - a == 1 && s[a] == '?') return NA;
    uint64_t v = 0;
    if (b - a > 2 && s[a] == '0' && s[a + 1] == 'x') {
        for (long i = a + 2; i < b; i++) {
            char c = s[i];
            v = v * 16u + (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
        }
        return (int64_t)v;
    }
    if (s[a] == '-') return (int64_t)(0u - (uint64_t)digits_val(s, a + 1, b));
    if (b - a > 1 && s[a] == '0') {
        int oct = 1;
        for (long i = a; i < b; i++) if (s[i] > '7') oct = 0;
        if (oct) { for (long i = a; i < b; i++) v = v * 8u + (uint64_t)(s[i] - '0'); return (int64_t)v; }
    }
    return digits_val(s, a, b);
}

typedef struct {
    long ret_a, ret_b;     /* ret_text */
    int64_t retval, dur;
    long err_a, err_b;     /* errno name span, err_a < 0: none */
    int err_kind;          /* 1: name at err_a..err_b, 2: "errno " + digits at err_a..err_b */
} tail_t;

static int parse_tail(const char *s, long n, long i, tail_t *t) {
    if (i >= n || s[i] != ' ') return 0;
    while (i < n && s[i] == ' ') i++;
    if (i + 1 >= n || s[i] != '=' || s[i + 1] != ' ') return 0;
    i += 2;
    long start = i;
    if (i < n && s[i] == '?') i++;
    else if (i + 1 < n && s[i] == '0' && s[i + 1] == 'x') {
        i += 2;
        long j = i;
        while (i < n && is_hex(s[i])) i++;
        if (i == j) return 0;
    } else {
        if (i < n && s[i] == '-') i++;
        long j = i;
        while (i < n && is_digit(s[i])) i++;
        if (i == j) return 0;
    }
    long tok_b = i;
    if (i < n && s[i] == '<') { i = skip_angle(s, n, i); if (i < 0) return 0; }
    if (starts(s, (size_t)n, (size_t)i, " /* ")) {
        long j = -1;
        for (long k = i + 4; k + 3 <= n; k++)
            if (s[k] == ' ' && s[k + 1] == '*' && s[k + 2] == '/') { j = k; break; }
        if (j < 0) return 0;
        i = j + 3;
    }
    t->err_a = -1; t->err_kind = 0;
    if (i + 2 < n && s[i] == ' ' && s[i + 1] == 'E' && is_errch(s[i + 2])) {
        long j = i + 2;
        while (j < n && is_errch(s[j])) j++;
        if (j == n || s[j] == ' ') { t->err_a = i + 1; t->err_b = j; t->err_kind = 1; i = j; }
    }
    if (t->err_kind == 0 && starts(s, (size_t)n, (size_t)i, " (errno ")) {
        long j = i + 8;
        while (j < n && is_digit(s[j])) j++;
        if (j > i + 8 && j < n && s[j] == ')') { t->err_a = i + 8; t->err_b = j; t->err_kind = 2; }
    }
    while (i + 1 < n && s[i] == ' ' && s[i + 1] == '(') {
        long j = skip_paren(s, n, i + 1);
        if (j < 0) return 0;
        i = j;
    }
    long end = i;
    int64_t dur = NA;
    if (i + 1 < n && s[i] == ' ' && s[i + 1] == '<') {
        long j = i + 2, k = j;
        while (k < n && is_digit(s[k])) k++;
        if (k == j) return 0;
        long fa = 0, fb = 0;
        long ib = k;
        if (k < n && s[k] == '.') {
            fa = k + 1; k = fa;
            while (k < n && is_digit(s[k])) k++;
            if (k == fa || k - fa > 9) return 0;
            fb = k;
        }
        if (k + 1 != n || s[k] != '>') return 0;
        dur = frac_ns(s, j, ib, fa, fb);
        i = n;
    }
    if (i != n) return 0;
    t->ret_a = start; t->ret_b = end;
    t->retval = parse_retval(s, start, tok_b);
    t->dur = dur;
    return 1;
}

/* split ARGS + end at lo: 1 marker (args lo..*ae, marker *ma..n), 2 tail, 0 none */
static int split_call(const char *s, long n, long lo, long *ae, long *ma, tail_t *t) {
    if (ends(s, (size_t)n, "...>")) {
        long k = -1;
        for (long q = n - 2; q >= lo; q--)
            if (s[q] == ' ' && s[q + 1] == '<') { k = q; break; }
        if (k >= lo) {
            const char *m = s + k + 1;
            long mn = n - k - 1;
            if ((mn == 16 && memcmp(m, "<unfinished ...>", 16) == 0) ||
                (mn == 14 && memcmp(m, "<detached ...>", 14) == 0) ||
                (mn >= 16 && memcmp(m, "<pid changed to ", 16) == 0)) {
                *ae = k; *ma = k + 1;
                return 1;
            }
        }
    }
    for (long q = n - 1; q >= lo; q--) {
        if (s[q] != ')') continue;
        if (parse_tail(s, n, q + 1, t)) { *ae = q; return 2; }
    }
    return 0;
}

static int64_t single_live(Parser *p) {
    for (size_t i = 0; i < p->live.cap; i++)
        if (p->live.used[i] == USED) return p->live.keys[i];
    return NA;
}
static int see_pid(Parser *p, int64_t pid) {
    if (!p->leader_known && imap_find(&p->announced, pid) < 0) {
        p->leader_known = 1;
        p->leader_pid = pid;
        size_t nu = p->unknown_rows.n / sizeof(int64_t);
        for (size_t k = 0; k < nu; k++) VEC_AT(p->pid, int64_t, VEC_AT(p->unknown_rows, int64_t, k)) = pid;
        p->unknown_rows.n = 0;
    }
    return imap_put(&p->live, pid, 1);
}

static int set_tail(Parser *p, int64_t r, const char *s, tail_t *t) {
    span_t rs;
    if (heap_put(p, r, s + t->ret_a, (size_t)(t->ret_b - t->ret_a), &rs)) return -1;
    VEC_AT(p->ret, span_t, r) = rs;
    VEC_AT(p->retval, int64_t, r) = t->retval;
    VEC_AT(p->dur, int64_t, r) = t->dur;
    VEC_AT(p->kind, int32_t, r) = K_CALL;
    int32_t e = -1;
    if (t->err_kind == 1) e = intern(&p->errnos, s + t->err_a, (size_t)(t->err_b - t->err_a));
    else if (t->err_kind == 2) {
        char buf[64];
        long nd = t->err_b - t->err_a;
        if (nd > 50) nd = 50;
        memcpy(buf, "errno ", 6);
        memcpy(buf + 6, s + t->err_a, (size_t)nd);
        e = intern(&p->errnos, buf, (size_t)(6 + nd));
    }
    if (e == -2) return -1;
    VEC_AT(p->errno_, int32_t, r) = e;
    return 0;
}

static int parse_dec(const char *s, long a, long b, int64_t *out) {
    if (b <= a) return 0;
    for (long i = a; i < b; i++) if (!is_digit(s[i])) return 0;
    *out = digits_val(s, a, b);
    return 1;
}

#define PID_DIGITS 10 /* longer is no pid (pid_max is at most 2**22): the line is rejected */
/* returns NULL on success, a reason string on failure, (const char*)-1 on a Python error */
#define PYERR ((const char *)-1)
static const char *record(Parser *p, const char *s, long n, int64_t ln) {
    long i = 0;
    int64_t pid = NA;
    if (p->pid_mode == PID_COLUMN) {
        while (i < n && is_digit(s[i])) i++;
        if (i == 0) return "expected a pid prefix";
        if (i > PID_DIGITS) return "pid longer than 10 digits";
        pid = digits_val(s, 0, i);
        if (i < n && s[i] == '<') {
            i = skip_angle(s, n, i);
            if (i < 0) return "unterminated <comm> after the pid";
        }
        if (i >= n || s[i] != ' ') return "expected a space after the pid";
        while (i < n && s[i] == ' ') i++;
    } else if (p->pid_mode == PID_FIXED) {
        pid = p->fixed_pid;
    } else {
        int ok = 0;
        if (starts(s, (size_t)n, 0, "[pid ")) { /* \[pid +([0-9]+)(?:<[^>]*>)?\]  */
            long j = 4;
            while (j < n && s[j] == ' ') j++;
            long d0 = j;
            while (j < n && is_digit(s[j])) j++;
            if (j > d0 && d0 > 4 && j - d0 <= PID_DIGITS) {
                long d1 = j;
                if (j < n && s[j] == '<') {
                    long k = j + 1;
                    while (k < n && s[k] != '>') k++;
                    j = k < n ? k + 1 : -1;
                }
                if (j > 0 && j + 1 < n && s[j] == ']' && s[j + 1] == ' ') {
                    ok = 1;
                    pid = digits_val(s, d0, d1);
                    i = j + 2;
                    if (see_pid(p, pid)) return PYERR;
                }
            }
        }
        if (!ok) {
            if (p->live.count == 1 && p->leader_known) pid = single_live(p);
            else pid = NA;
        }
    }
    int64_t ts = NA;
    if (p->ts_mode != TS_NONE) {
        long j = i;
        if (p->ts_mode == TS_TOD) {
            long a = j;
            while (j < n && is_digit(s[j])) j++;
            if (j - a < 1 || j - a > 2 || j >= n || s[j] != ':') return "expected a timestamp";
            long h = (long)digits_val(s, a, j);
            j++;
            if (j + 6 > n || !is_digit(s[j]) || !is_digit(s[j + 1]) || s[j + 2] != ':' || !is_digit(s[j + 3]) ||
                !is_digit(s[j + 4]))
                return "expected a timestamp";
            long mi = (s[j] - '0') * 10 + (s[j + 1] - '0'), se = (s[j + 3] - '0') * 10 + (s[j + 4] - '0');
            j += 5;
            int64_t tt = ((int64_t)(h * 60 + mi) * 60 + se) * 1000000000LL;
            if (j < n && s[j] == '.') {
                long fa = j + 1, k = fa;
                while (k < n && is_digit(s[k])) k++;
                if (k == fa || k - fa > 9 || k >= n || s[k] != ' ') return "expected a timestamp";
                tt += frac_ns(s, 0, 0, fa, k);
                j = k;
            }
            if (j >= n || s[j] != ' ') return "expected a timestamp";
            j++;
            if (p->first_tod == NA) p->first_tod = tt;
            if (p->last_ts != NA && tt + p->day_off < p->last_ts - HALF_DAY_NS) p->day_off += DAY_NS;
            ts = tt + p->day_off;
            p->last_ts = ts;
        } else if (p->ts_mode == TS_EPOCH) {
            long a = j;
            while (j < n && is_digit(s[j])) j++;
            if (j == a) return "expected a timestamp";
            long ib = j, fa = 0, fb = 0;
            if (j < n && s[j] == '.') {
                fa = j + 1; long k = fa;
                while (k < n && is_digit(s[k])) k++;
                if (k == fa || k - fa > 9 || k >= n || s[k] != ' ') return "expected a timestamp";
                fb = k; j = k;
            }
            if (j >= n || s[j] != ' ') return "expected a timestamp";
            ts = frac_ns(s, a, ib, fa, fb);
            j++;
        } else {
            while (j < n && s[j] == ' ') j++;
            long a = j;
            while (j < n && is_digit(s[j])) j++;
            if (j == a || j >= n || s[j] != '.') return "expected a timestamp";
            long ib = j, fa = j + 1, k = fa;
            while (k < n && is_digit(s[k])) k++;
            if (k == fa || k - fa > 9 || k >= n || s[k] != ' ') return "expected a timestamp";
            p->rel_sum = (int64_t)((uint64_t)p->rel_sum + (uint64_t)frac_ns(s, a, ib, fa, k));
            ts = p->rel_sum;
            j = k + 1;
        }
        i = j;
        /* optional "(+ S.F) " */
        if (starts(s, (size_t)n, (size_t)i, "(+")) {
            long k = i + 2;
            while (k < n && s[k] == ' ') k++;
            long a = k;
            while (k < n && is_digit(s[k])) k++;
            if (k > a && k < n && s[k] == '.') {
                long f = ++k;
                while (k < n && is_digit(s[k])) k++;
                if (k > f && k + 1 < n && s[k] == ')' && s[k + 1] == ' ') i = k + 2;
            }
        }
    }
    /* (?:\[ *[0-9a-f?]+\] )+ */
    for (;;) {
        if (i >= n || s[i] != '[') break;
        long k = i + 1;
        while (k < n && s[k] == ' ') k++;
        long a = k;
        while (k < n && (is_hex(s[k]) || s[k] == '?')) k++;
        if (k > a && k + 1 < n && s[k] == ']' && s[k + 1] == ' ') i = k + 2;
        else break;
    }
    if (i >= n) return "empty record";
    char c = s[i];
    tail_t t;
    long ae, ma;
    if (c == '<') {
        if (!starts(s, (size_t)n, (size_t)i, "<... ")) return "expected '<... NAME resumed>'";
        long a = i + 5, k = a;
        while (k < n && is_namech(s[k])) k++;
        if (k == a || !starts(s, (size_t)n, (size_t)k, " resumed>")) return "expected '<... NAME resumed>'";
        long j = k + 9;
        if (starts(s, (size_t)n, (size_t)j, " <unfinished ...>")) j += 17;
        else if (j < n && s[j] == ' ') j++;
        int kind = split_call(s, n, j, &ae, &ma, &t);
        if (!kind) return "no return value after the resumed arguments";
        int32_t code = intern(&p->names, s + a, (size_t)(k - a));
        if (code == -2) return PYERR;
        int64_t r = imap_pop(&p->pending, pid, -1); /* an unknown pid (NA) is the only process */
        if (r >= 0 && VEC_AT(p->name, int32_t, r) != code) {
            if (imap_put(&p->pending, pid, r)) return PYERR;
            r = -1;
        }
        if (r < 0) {
            r = new_row(p, K_UNFINISHED, pid, ts, ln, code, s + j, (size_t)(ae - j), -1);
            if (r < 0) return PYERR;
            VEC_AT(p->orig, uint8_t, r) = (kind == 1 && n - ma == 16 && memcmp(s + ma, "<unfinished ...>", 16) == 0) ? 3 : 2;
        } else {
            if (heap_extend(p, r, &VEC_AT(p->args, span_t, r), NULL, 0, s + j, (size_t)(ae - j))) return PYERR;
            VEC_AT(p->end, int64_t, r) = ts;
            p->last_row = r;
        }
        if (kind == 1) {
            span_t ms;
            if (heap_put(p, r, s + ma, (size_t)(n - ma), &ms)) return PYERR;
            VEC_AT(p->ret, span_t, r) = ms;
            if (n - ma == 16 && memcmp(s + ma, "<unfinished ...>", 16) == 0)
                if (imap_put(&p->pending, pid, r)) return PYERR;
            return NULL;
        }
        if (set_tail(p, r, s, &t)) return PYERR;
        return NULL;
    }
    if (c == '-' && starts(s, (size_t)n, (size_t)i, "--- ")) {
        if (!ends(s, (size_t)n, " ---") || n - 4 < i + 4) return "unterminated signal line";
        const char *in = s + i + 4;
        long m = n - 4 - (i + 4);
        if (m >= 11 && memcmp(in, "stopped by ", 11) == 0) {
            int32_t sg = intern(&p->signals, in + 11, (size_t)(m - 11));
            if (sg == -2) return PYERR;
            if (new_row(p, K_STOPPED, pid, ts, ln, -1, in, (size_t)m, sg) < 0) return PYERR;
            return NULL;
        }
        long k = 0;
        while (k < m && in[k] != ' ') k++;
        int32_t sg = intern(&p->signals, in, (size_t)k);
        if (sg == -2) return PYERR;
        const char *rest = k < m ? in + k + 1 : in + m;
        size_t nrest = k < m ? (size_t)(m - k - 1) : 0;
        if (new_row(p, K_SIGNAL, pid, ts, ln, -1, rest, nrest, sg) < 0) return PYERR;
        return NULL;
    }
    if (c == '+' && starts(s, (size_t)n, (size_t)i, "+++ ")) {
        if (!ends(s, (size_t)n, " +++") || n - 4 < i + 4) return "unterminated exit line";
        const char *in = s + i + 4;
        long m = n - 4 - (i + 4);
        int64_t r, v;
        if (m >= 12 && memcmp(in, "exited with ", 12) == 0) {
            if (!parse_dec(in, 12, m, &v)) return "bad exit status";
            r = new_row(p, K_EXIT, pid, ts, ln, -1, "", 0, -1);
            if (r < 0) return PYERR;
            VEC_AT(p->retval, int64_t, r) = v;
        } else if (m >= 10 && memcmp(in, "killed by ", 10) == 0) {
            long k = 10;
            while (k < m && in[k] != ' ') k++;
            int32_t sg = intern(&p->signals, in + 10, (size_t)(k - 10));
            if (sg == -2) return PYERR;
            r = new_row(p, K_KILLED, pid, ts, ln, -1, "", 0, sg);
            if (r < 0) return PYERR;
        } else if (m >= 28 && memcmp(in, "superseded by execve in pid ", 28) == 0) {
            if (!parse_dec(in, 28, m, &v)) return "bad pid in superseded line";
            r = new_row(p, K_SUPERSEDED, pid, ts, ln, -1, "", 0, -1);
            if (r < 0) return PYERR;
            VEC_AT(p->retval, int64_t, r) = v;
        } else {
            return "unknown '+++' line";
        }
        span_t rs;
        if (heap_put(p, r, in, (size_t)m, &rs)) return PYERR;
        VEC_AT(p->ret, span_t, r) = rs;
        imap_pop(&p->pending, pid, -1);
        imap_pop(&p->live, pid, 0);
        return NULL;
    }
    long j = i;
    while (j < n && is_namech(s[j])) j++;
    if (j == i || j >= n || s[j] != '(') return "expected a system call, signal, exit or resumed line";
    int kind = split_call(s, n, j + 1, &ae, &ma, &t);
    if (!kind) return "no return value after the arguments";
    int32_t code = intern(&p->names, s + i, (size_t)(j - i));
    if (code == -2) return PYERR;
    int64_t r = new_row(p, K_UNFINISHED, pid, ts, ln, code, s + j + 1, (size_t)(ae - j - 1), -1);
    if (r < 0) return PYERR;
    if (kind == 1) {
        span_t ms;
        if (heap_put(p, r, s + ma, (size_t)(n - ma), &ms)) return PYERR;
        VEC_AT(p->ret, span_t, r) = ms;
        if (n - ma == 16 && memcmp(s + ma, "<unfinished ...>", 16) == 0) {
            VEC_AT(p->orig, uint8_t, r) = 1;
            if (imap_put(&p->pending, pid, r)) return PYERR;
        }
        return NULL;
    }
    if (set_tail(p, r, s, &t)) return PYERR;
    return NULL;
}

static int message(Parser *p, int64_t ln, const char *s, long n) {
    if (add_pair(p->messages, ln, s, (size_t)n)) return -1;
    /* first "Process (\d+) (attached|detached)" */
    for (long k = 0; k + 8 <= n; k++) {
        if (memcmp(s + k, "Process ", 8) != 0) continue;
        long a = k + 8, j = a;
        while (j < n && is_digit(s[j])) j++;
        if (j == a || j - a > PID_DIGITS) continue;
        if (starts(s, (size_t)n, (size_t)j, " attached")) {
            int64_t pid = digits_val(s, a, j);
            if (imap_put(&p->announced, pid, 1) || imap_put(&p->live, pid, 1)) return -1;
            return 0;
        }
        if (starts(s, (size_t)n, (size_t)j, " detached")) {
            imap_pop(&p->live, digits_val(s, a, j), 0);
            return 0;
        }
    }
    return 0;
}

#define COLOUR_REASON "ANSI colour escape in the trace: re-run strace with --color=never or -o FILE"
static int do_line(Parser *p, const char *s0, long n0, int64_t ln) {
    const char *s = s0;
    long n = n0;
    char *joined = NULL;
    if (p->colour_block) {
        for (long q = 0; q + 1 < n0; q++)
            if (s0[q] == 0x1b && s0[q + 1] == '[') {
                if (p->colour == NULL) {
                    PyGILState_STATE g = PyGILState_Ensure();
                    p->colour = Py_BuildValue("(LN)", (long long)ln, latin1(s0, (size_t)n0));
                    PyGILState_Release(g);
                    if (!p->colour) return -1;
                }
                return add_reject(p, ln, s0, (size_t)n0, COLOUR_REASON);
            }
    }
    if (p->has_splice) {
        joined = malloc(p->splice_n + (size_t)n0 + 1);
        if (!joined) { nomem(); return -1; }
        memcpy(joined, p->splice, p->splice_n);
        memcpy(joined + p->splice_n, s0, (size_t)n0);
        s = joined;
        n = (long)(p->splice_n + (size_t)n0);
        ln = p->splice_line;
        p->has_splice = 0;
        free(p->splice);
        p->splice = NULL;
    }
    int rc = 0;
    if (p->in_summary) {
        rc = add_pair(p->summary, ln, s, (size_t)n);
        long k = 0;
        while (k < n && (s[k] == ' ' || is_digit(s[k]) || s[k] == '.')) k++;
        if (starts(s, (size_t)n, (size_t)k, "total") || ends(s, (size_t)n, " total")) p->in_summary = 0;
        goto out;
    }
    if (starts(s, (size_t)n, 0, " > ")) {
        if (p->last_row < 0) { rc = add_reject(p, ln, s, (size_t)n, "stack frame before any record"); goto out; }
        span_t *sp = &VEC_AT(p->stack, span_t, p->last_row);
        if (sp->len < 0) rc = heap_put(p, p->last_row, s + 3, (size_t)(n - 3), sp);
        else rc = heap_extend(p, p->last_row, sp, "\n", 1, s + 3, (size_t)(n - 3));
        goto out;
    }
    if (starts(s, (size_t)n, 0, "strace: ") || starts(s, (size_t)n, 0, "[ Process ")) {
        rc = message(p, ln, s, n);
        goto out;
    }
    if (starts(s, (size_t)n, 0, "% time") || starts(s, (size_t)n, 0, "System call usage summary")) {
        p->in_summary = 1;
        rc = add_pair(p->summary, ln, s, (size_t)n);
        goto out;
    }
    int64_t clock[4] = {p->rel_sum, p->last_ts, p->day_off, p->first_tod};
    const char *reason = record(p, s, n, ln);
    if (reason == PYERR) { rc = -1; goto out; }
    if (reason == NULL) goto out;
    long k = -1;
    for (long q = n - 8; q > 0; q--)
        if (memcmp(s + q, "strace: ", 8) == 0) { k = q; break; }
    if (k > 0) { /* the record goes on on the next line: its timestamp is read again then */
        p->rel_sum = clock[0]; p->last_ts = clock[1]; p->day_off = clock[2]; p->first_tod = clock[3];
        if (message(p, ln, s + k, n - k)) { rc = -1; goto out; }
        p->splice = malloc((size_t)k);
        if (!p->splice) { nomem(); rc = -1; goto out; }
        memcpy(p->splice, s, (size_t)k);
        p->splice_n = (size_t)k;
        p->splice_line = ln;
        p->has_splice = 1;
        goto out;
    }
    rc = add_reject(p, ln, s, (size_t)n, reason);
out:
    free(joined);
    return rc;
}

/* ------------------------------------------------------ Python interface */
static int Parser_init(Parser *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"pid_mode", "ts_mode", "fixed_pid", NULL};
    long long fixed = NA;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ii|L", kwlist, &self->pid_mode, &self->ts_mode, &fixed)) return -1;
    self->fixed_pid = fixed;
    self->last_row = -1;
    self->last_ts = NA;
    self->first_tod = NA;
    self->messages = PyList_New(0);
    self->rejects = PyList_New(0);
    self->summary = PyList_New(0);
    if (!self->messages || !self->rejects || !self->summary) return -1;
    return 0;
}

static void free_vecs(Parser *p) {
    vec_t *v[] = {&p->kind, &p->pid, &p->ts, &p->end, &p->dur, &p->name, &p->retval, &p->errno_, &p->signal,
                  &p->line, &p->args, &p->ret, &p->stack, &p->unknown_rows, &p->orig};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) { free(v[i]->p); memset(v[i], 0, sizeof(vec_t)); }
    for (size_t i = 0; i < p->nsegs; i++) seg_free(&p->segs[i]);
    free(p->segs); p->segs = NULL; p->nsegs = p->capsegs = 0;
}

static void Parser_dealloc(Parser *self) {
    free_vecs(self);
    intern_free(&self->names); intern_free(&self->errnos); intern_free(&self->signals);
    imap_free(&self->pending); imap_free(&self->live); imap_free(&self->announced);
    free(self->splice);
    Py_XDECREF(self->messages); Py_XDECREF(self->rejects); Py_XDECREF(self->summary); Py_XDECREF(self->colour);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Parser_feed(Parser *self, PyObject *arg) {
    Py_buffer b;
    if (self->finished) { PyErr_SetString(PyExc_RuntimeError, "parser already finished"); return NULL; }
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE)) return NULL;
    const char *s = b.buf;
    long n = (long)b.len, a = 0;
    self->colour_block = 0;
    for (const char *q = s; (q = memchr(q, 0x1b, (size_t)(s + n - q))) != NULL; q++)
        if (q + 1 < s + n && q[1] == '[') { self->colour_block = 1; break; }
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    while (a < n) {
        const char *nl = memchr(s + a, '\n', (size_t)(n - a));
        long e = nl ? (long)(nl - s) : n;
        self->lineno++;
        if (do_line(self, s + a, e - a, self->lineno)) { failed = 1; break; }
        a = e + 1;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    if (failed) return NULL;
    Py_RETURN_NONE;
}

/* Arrow large_string buffers of one column: offsets, data, validity (NULL when no nulls) */
typedef struct { span_t *sp; int64_t *off; char *data; uint8_t *valid; int64_t total; } outcol_t;

/* at most this many threads gather one parser's strings (finish(threads)); parts start at multiples of 8
 * rows, so no two threads write the same byte of a validity bitmap */
#define GATHER_MAX 8

/* the output's bytes are mapped in this far ahead of the copy, a stretch at a time: far fewer page
 * faults, and the pages are still taken as the segments behind are let go (peak: one copy of the text) */
#define POPULATE_AHEAD ((int64_t)4 << 20)

static PyObject *outcol_tuple(outcol_t *c, int64_t n) {
    c->off[n] = c->total;
    PyObject *bo = blob_new((char *)c->off, (Py_ssize_t)((n + 1) * (int64_t)sizeof(int64_t)));
    PyObject *bd = blob_new(c->data, (Py_ssize_t)c->total);
    PyObject *bv = c->valid ? blob_new((char *)c->valid, (Py_ssize_t)(n / 8 + 1)) : (Py_INCREF(Py_None), Py_None);
    c->off = NULL; c->data = NULL; c->valid = NULL;
    if (!bo || !bd || !bv) { Py_XDECREF(bo); Py_XDECREF(bd); Py_XDECREF(bv); return NULL; }
    return Py_BuildValue("(NNN)", bo, bd, bv);
}

/* map in the pages of [a, b) that it covers whole, in one call rather than one page fault each (the
 * bytes are about to be written; a kernel without MADV_POPULATE_WRITE faults them in as before) */
static size_t page_bytes = 4096; /* set from sysconf() when the module loads */
static void populate(char *a, char *b) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    uintptr_t m = (uintptr_t)page_bytes - 1;
    uintptr_t lo = ((uintptr_t)a + m) & ~m, hi = (uintptr_t)b & ~m;
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
    (void)a; (void)b;
#endif
}

/* one thread's share of the gather: rows [lo, hi) of the three columns, bytes [o, e) of each column's
 * data; `spare`: segments this part has let go, whose pages can be moved under the output */
#define SPARE_MAX 8
typedef struct {
    Parser *p; outcol_t *c; int64_t lo, hi, o[3], e[3], ready[3];
    char *spare[SPARE_MAX]; int nspare;
} gather_part_t;

/* Column j's output ready (mapped in) up to at least byte `need` (or its part's end). Where a spare
 * segment fits whole pages of the part's output, its pages are moved there (mremap): the text copied
 * out of segments lands on pages already in memory instead of new ones, and the segment costs no
 * unmap. Elsewhere the next stretch is populated. Only big columns: their buffers are mapped apart. */
static void make_ready(gather_part_t *g, int j, int64_t need) {
    outcol_t *c = &g->c[j];
    int64_t end = g->e[j];
    uintptr_t m = (uintptr_t)page_bytes - 1;
    while (g->ready[j] < need && g->ready[j] < end) {
#if defined(__linux__) && defined(MREMAP_FIXED)
        if (g->nspare && c->total >= 4 * (int64_t)SEG_SIZE) {
            uintptr_t a = ((uintptr_t)(c->data + g->ready[j]) + m) & ~m;
            uintptr_t lim = (uintptr_t)(c->data + end) & ~m;
            if (a + SEG_SIZE <= lim) {
                char *q = g->spare[--g->nspare];
                if (mremap(q, SEG_SIZE, SEG_SIZE, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)a) != MAP_FAILED) {
                    /* bytes before a, on the page the output had reached, fault in as they are written */
                    g->ready[j] = (int64_t)(a + SEG_SIZE - (uintptr_t)c->data);
                    continue;
                }
                munmap(q, SEG_SIZE);
            }
        }
#endif
        int64_t upto = need + POPULATE_AHEAD < end ? need + POPULATE_AHEAD : end;
        populate(c->data + g->ready[j], c->data + upto);
        g->ready[j] = upto;
    }
}

static void outcol_row(gather_part_t *g, int j, int64_t r) {
    outcol_t *c = &g->c[j];
    int64_t *o = &g->o[j];
    c->off[r] = *o;
    span_t sp = c->sp[r];
    if (sp.len >= 0) {
        if (*o + sp.len > g->ready[j]) make_ready(g, j, *o + sp.len);
        memcpy(c->data + *o, span_ptr(g->p, sp), (size_t)sp.len);
        *o += sp.len;
        if (c->valid) c->valid[r >> 3] |= (uint8_t)(1u << (r & 7));
    }
}

/* a segment the part is past: kept as a spare for the output when it is a standard one, else unmapped */
static void let_go(gather_part_t *g, seg_t *s) {
#ifdef MAP_ANONYMOUS
    if (s->p && s->cap == SEG_SIZE && g->nspare < SPARE_MAX) {
        g->spare[g->nspare++] = s->p;
        s->p = NULL;
        return;
    }
#endif
    seg_unmap(s);
}

/* Copy the part's strings in row order. A segment is let go once the part is past its last row, if its
 * first row is in this part too: then no other part's row points into it. */
static void *gather_part(void *arg) {
    gather_part_t *g = (gather_part_t *)arg;
    Parser *p = g->p;
    size_t lo = 0;
    for (int j = 0; j < 3; j++) {
        g->ready[j] = g->o[j];
        populate((char *)(g->c[j].off + g->lo), (char *)(g->c[j].off + g->hi));
    }
    for (int64_t r = g->lo; r < g->hi; r++) {
        outcol_row(g, 0, r);
        outcol_row(g, 1, r);
        outcol_row(g, 2, r);
        while (lo + 1 < p->nsegs) {
            seg_t *s = &p->segs[lo];
            if (s->first_row < g->lo || s->first_row >= g->hi) { lo++; continue; } /* another part's */
            if (s->last_row > r) break;
            let_go(g, s);
            lo++;
        }
    }
#ifdef MAP_ANONYMOUS
    while (g->nspare) munmap(g->spare[--g->nspare], SEG_SIZE);
#endif
    return NULL;
}

/* gather the three string columns in row order (on up to `threads` threads), releasing string segments
 * behind */
static int gather_all(Parser *p, PyObject *d, int threads) {
    int64_t n = p->nrows;
    outcol_t c[3];
    vec_t *cols[3] = {&p->args, &p->ret, &p->stack};
    const char *keys[3] = {"args", "ret_text", "backtrace"};
    gather_part_t part[GATHER_MAX];
    int64_t nulls[3] = {0, 0, 0};
    int np = threads < 1 ? 1 : threads > GATHER_MAX ? GATHER_MAX : threads;
    if (n / np < 8) np = n >= 16 ? (int)(n / 8) : 1;
    memset(c, 0, sizeof(c));
    memset(part, 0, sizeof(part));
    int rc = -1;
    /* the parts' row ranges and where each part's bytes start */
    for (int k = 0; k < np; k++) {
        part[k].p = p; part[k].c = c;
        part[k].lo = k == 0 ? 0 : (n * k / np) & ~(int64_t)7;
        part[k].hi = k == np - 1 ? n : (n * (k + 1) / np) & ~(int64_t)7;
    }
    for (int j = 0; j < 3; j++) {
        c[j].sp = (span_t *)cols[j]->p;
        int64_t t = 0;
        for (int k = 0; k < np; k++) {
            part[k].o[j] = t;
            for (int64_t r = part[k].lo; r < part[k].hi; r++) {
                if (c[j].sp[r].len < 0) nulls[j]++; else t += c[j].sp[r].len;
            }
        }
        c[j].total = t;
        for (int k = 0; k < np; k++) part[k].e[j] = k + 1 < np ? part[k + 1].o[j] : t;
        c[j].off = malloc((size_t)(n + 1) * sizeof(int64_t));
        c[j].data = malloc((size_t)t + 1);
        c[j].valid = nulls[j] ? calloc((size_t)(n / 8 + 1), 1) : NULL;
        if (!c[j].off || !c[j].data || (nulls[j] && !c[j].valid)) { PyErr_NoMemory(); goto done; }
    }
#ifdef __linux__
    if (np > 1) {
        pthread_t tid[GATHER_MAX];
        int started[GATHER_MAX] = {0};
        Py_BEGIN_ALLOW_THREADS
        for (int k = 1; k < np; k++) started[k] = pthread_create(&tid[k], NULL, gather_part, &part[k]) == 0;
        gather_part(&part[0]);
        for (int k = 1; k < np; k++) {
            if (started[k]) pthread_join(tid[k], NULL);
            else gather_part(&part[k]); /* no thread to be had: this one does it */
        }
        Py_END_ALLOW_THREADS
    } else
#endif
    {
        for (int k = 0; k < np; k++) gather_part(&part[k]);
    }
    for (int j = 0; j < 3; j++) {
        PyObject *t = outcol_tuple(&c[j], n);
        if (!t || PyDict_SetItemString(d, keys[j], t)) { Py_XDECREF(t); goto done; }
        Py_DECREF(t);
    }
    rc = 0;
done:
    for (int j = 0; j < 3; j++) { free(c[j].off); free(c[j].data); free(c[j].valid); }
    for (size_t i = 0; i < p->nsegs; i++) seg_free(&p->segs[i]);
    for (int j = 0; j < 3; j++) { free(cols[j]->p); memset(cols[j], 0, sizeof(vec_t)); }
    return rc;
}

/* int64 nanoseconds (NA where missing) to float64 seconds (NaN), in place: the same value as
 * numpy's float64(ns) / 1e9, and no second buffer */
static void ns_to_seconds(char *p, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        int64_t x;
        double y;
        memcpy(&x, p + i * 8, 8);
        y = x == NA ? NAN : (double)x / 1e9;
        memcpy(p + i * 8, &y, 8);
    }
}

static PyObject *take(vec_t *v) {
    char *p = v->p;
    Py_ssize_t n = (Py_ssize_t)v->n;
    memset(v, 0, sizeof(vec_t));
    if (!p) p = malloc(1);
    return blob_new(p, n);
}

static PyObject *Parser_finish(Parser *self, PyObject *args) {
    int threads = 1;
    if (!PyArg_ParseTuple(args, "|i:finish", &threads)) return NULL;
    if (self->finished) { PyErr_SetString(PyExc_RuntimeError, "parser already finished"); return NULL; }
    self->finished = 1;
    if (self->has_splice) {
        if (add_reject(self, self->splice_line, self->splice, self->splice_n, "record cut by a message at end of input"))
            return NULL;
        self->has_splice = 0;
    }
    PyObject *d = PyDict_New();
    if (!d) return NULL;
#define SET(k, expr) do { PyObject *o_ = (expr); if (!o_ || PyDict_SetItemString(d, k, o_)) { Py_XDECREF(o_); Py_DECREF(d); return NULL; } Py_DECREF(o_); } while (0)
    SET("rows", PyLong_FromLongLong(self->nrows));
    SET("lines", PyLong_FromLongLong(self->lineno));
    seg_pool_trim(); /* what the scans kept for reuse goes back to the system before the output is made */
    if (gather_all(self, d, threads)) { Py_DECREF(d); return NULL; }
    SET("kind", take(&self->kind));
    SET("pid", take(&self->pid));
    ns_to_seconds(self->ts.p, (int64_t)(self->ts.n / 8));
    ns_to_seconds(self->end.p, (int64_t)(self->end.n / 8));
    ns_to_seconds(self->dur.p, (int64_t)(self->dur.n / 8));
    SET("ts", take(&self->ts));
    SET("end", take(&self->end));
    SET("dur", take(&self->dur));
    SET("name", take(&self->name));
    SET("retval", take(&self->retval));
    SET("errno", take(&self->errno_));
    SET("signal", take(&self->signal));
    SET("line", take(&self->line));
    SET("names", intern_list(&self->names));
    SET("errnos", intern_list(&self->errnos));
    SET("signals", intern_list(&self->signals));
    Py_INCREF(self->messages); SET("messages", self->messages);
    Py_INCREF(self->rejects); SET("rejects", self->rejects);
    Py_INCREF(self->summary); SET("summary", self->summary);
#undef SET
    return d;
}

/* dst = bytes(dst) + sep + bytes(src): both spans already UTF-8 */
static int heap_concat(Parser *p, int64_t row, span_t *dst, const char *sep, size_t nsep, span_t src) {
    size_t a = dst->len > 0 ? (size_t)dst->len : 0, b = src.len > 0 ? (size_t)src.len : 0;
    if (dst->len >= 0 && nsep == 0 && b == 0) return 0; /* nothing to add: no copy */
    int64_t off;
    char *d = heap_room(p, a + nsep + b, row, &off);
    if (!d) return -1;
    if (a) memcpy(d, span_ptr(p, *dst), a);
    if (nsep) memcpy(d + a, sep, nsep);
    if (b) memcpy(d + a + nsep, span_ptr(p, src), b);
    p->segs[p->nsegs - 1].n += a + nsep + b;
    dst->off = off;
    dst->len = (int64_t)(a + nsep + b);
    return 0;
}

static int32_t *code_map(intern_t *into, intern_t *from) {
    int32_t *m = malloc((from->n + 1) * sizeof(int32_t));
    if (!m) { PyErr_NoMemory(); return NULL; }
    for (size_t i = 0; i < from->n; i++) {
        m[i] = intern(into, from->names[i], from->lens[i]);
        if (m[i] == -2) { free(m); return NULL; }
    }
    return m;
}

static int shift_list(PyObject *into, PyObject *from, int64_t lbase) {
    Py_ssize_t n = PyList_GET_SIZE(from);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(from, i);
        Py_ssize_t k = PyTuple_GET_SIZE(t);
        PyObject *u = PyTuple_New(k);
        if (!u) return -1;
        long long ln = PyLong_AsLongLong(PyTuple_GET_ITEM(t, 0));
        PyObject *nl = PyLong_FromLongLong(ln + lbase);
        if (!nl) { Py_DECREF(u); return -1; }
        PyTuple_SET_ITEM(u, 0, nl);
        for (Py_ssize_t j = 1; j < k; j++) {
            PyObject *x = PyTuple_GET_ITEM(t, j);
            Py_INCREF(x);
            PyTuple_SET_ITEM(u, j, x);
        }
        int r = PyList_Append(into, u);
        Py_DECREF(u);
        if (r) return -1;
    }
    return 0;
}

static PyTypeObject ParserType;

/* the 14 row columns of a parser, in one order, and the bytes of one row of each */
#define NCOLS 14
static const size_t COL_WIDTH[NCOLS] = {4, 8, 8, 8, 8, 4, 8, 4, 4, 8, 16, 16, 16, 1};
static void columns_of(Parser *p, vec_t *v[NCOLS]) {
    vec_t *all[NCOLS] = {&p->kind, &p->pid, &p->ts, &p->end, &p->dur, &p->name, &p->retval, &p->errno_,
                         &p->signal, &p->line, &p->args, &p->ret, &p->stack, &p->orig};
    memcpy(v, all, sizeof(all));
}

/* Their rows [lo, hi) appended to our columns (room already made), as the row loop of merge() would:
 * clocks shifted by D, codes re-mapped, spans moved to our segment numbers, line numbers shifted. Each of
 * the 14 columns is one job; `col` picks which (-1: all). */
typedef struct {
    Parser *A, *B;
    int32_t *nmap, *emap, *smap;
    int64_t lo, hi, D, sh, lbase;
    int col;
    int move; /* move their pages under our columns (ours are fresh there) rather than copy */
} tail_job_t;

/* Move `n` bytes from `src` (inside the buffer that starts at `base`, whose bytes before `src` are
 * spent) to `dst` (room mapped but not yet written, inside another buffer). Whole pages are moved by
 * the kernel (mremap) instead of copied into new ones: the bytes are first shifted down in their own
 * buffer to dst's offset within a page, and the source keeps its range, mapped again empty by the same
 * call (MREMAP_DONTUNMAP), so its buffer stays whole for free(). The page holding `base` (where the
 * allocator keeps its header) is never moved or shifted into. Small moves, and any failure, copy. */
static void move_bytes(char *dst, char *src, size_t n, char *base) {
    size_t P = page_bytes;
#if defined(__linux__) && defined(MREMAP_FIXED) && defined(MREMAP_DONTUNMAP)
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    size_t head = (P - d % P) % P;                     /* up to dst's next page boundary: copied */
    uintptr_t first = ((uintptr_t)base / P + 1) * P;  /* the first page not holding `base` */
    if (s + head - (s + head) % P < first) head += P;  /* (shifted down, the data would reach base's page) */
    if (n >= head + 2 * P) {
        memcpy(dst, src, head);
        char *from = src + head, *to = dst + head;
        size_t rest = n - head, shift = (uintptr_t)from % P;
        if (shift) { memmove(from - shift, from, rest); from -= shift; } /* now at to's offset in a page: 0 */
        size_t whole = rest / P * P;
        if (mremap(from, whole, whole, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, to) != MAP_FAILED) {
            memcpy(to + whole, from + whole, rest - whole);
        } else { /* (a kernel before 5.7 has no MREMAP_DONTUNMAP) */
            memcpy(to, from, rest);
        }
        return;
    }
#endif
    (void)P; (void)base;
    memcpy(dst, src, n);
}

static void tail_column(tail_job_t *j, int col) {
    Parser *A = j->A, *B = j->B;
    int64_t m = j->hi - j->lo;
    vec_t *src[NCOLS], *dst[NCOLS];
    columns_of(B, src);
    columns_of(A, dst);
    size_t w = COL_WIDTH[col];
    char *in = src[col]->p + (size_t)j->lo * w, *out = dst[col]->p + dst[col]->n;
    /* their rows made ours in place (their columns are spent after the merge), then moved */
    switch (col) {
    case 2: case 3: { /* ts, end */
        int64_t *a = (int64_t *)in;
        for (int64_t i = 0; i < m; i++) if (a[i] != NA) a[i] = (int64_t)((uint64_t)a[i] + (uint64_t)j->D);
        break;
    }
    case 5: case 7: case 8: { /* name, errno, signal codes */
        const int32_t *map = col == 5 ? j->nmap : col == 7 ? j->emap : j->smap;
        int32_t *a = (int32_t *)in;
        for (int64_t i = 0; i < m; i++) if (a[i] >= 0) a[i] = map[a[i]];
        break;
    }
    case 9: { /* line */
        int64_t *a = (int64_t *)in;
        for (int64_t i = 0; i < m; i++) a[i] += j->lbase;
        break;
    }
    case 10: case 11: case 12: { /* string spans */
        span_t *a = (span_t *)in;
        for (int64_t i = 0; i < m; i++) if (a[i].len >= 0) a[i].off += j->sh;
        break;
    }
    default:
        break;
    }
    if (j->move) move_bytes(out, in, (size_t)m * w, src[col]->p);
    else memcpy(out, in, (size_t)m * w);
}

static void *tail_part(void *arg) {
    tail_job_t *j = (tail_job_t *)arg;
    /* columns split in two halves of about the same bytes per row: 53 (spans, kind, orig) and 60 */
    static const int half[2][10] = {{10, 11, 12, 0, 13, -1}, {1, 2, 3, 4, 5, 6, 7, 8, 9, -1}};
    if (j->col < 0) { for (int c = 0; c < NCOLS; c++) tail_column(j, c); return NULL; }
    for (int k = 0; half[j->col][k] >= 0; k++) tail_column(j, half[j->col][k]);
    return NULL;
}

static void merge_tail(tail_job_t *job, int threads) {
    Parser *A = job->A;
    int64_t m = job->hi - job->lo;
    vec_t *dst[NCOLS];
    columns_of(A, dst);
    int done = 0;
#ifdef __linux__
    if (threads > 1) {
        tail_job_t second = *job;
        pthread_t tid;
        job->col = 0; second.col = 1;
        Py_BEGIN_ALLOW_THREADS
        if (pthread_create(&tid, NULL, tail_part, &second) == 0) {
            tail_part(job);
            pthread_join(tid, NULL);
            done = 1;
        }
        Py_END_ALLOW_THREADS
    }
#endif
    if (!done) { job->col = -1; tail_part(job); }
    for (int c = 0; c < NCOLS; c++) dst[c]->n += (size_t)m * COL_WIDTH[c];
}

/* Append the rows of `other`, which scanned the bytes right after ours, as if
 * one scanner had read both: timestamps continue (-t/-tt roll-over, -r sums),
 * line numbers shift, codes are re-interned, and a call left <unfinished ...>
 * at the end of our part is joined with its <... resumed> half in theirs.
 * Afterwards our state is that of one scanner at the end of their bytes (calls
 * still pending, the row stack frames attach to, clocks), so a third part can
 * be merged, more lines fed, or drain() called. */
static PyObject *Parser_merge(Parser *A, PyObject *args) {
    PyObject *arg;
    int threads = 1;
    if (!PyArg_ParseTuple(args, "O|i:merge", &arg, &threads)) return NULL;
    if (!PyObject_TypeCheck(arg, &ParserType)) { PyErr_SetString(PyExc_TypeError, "merge() needs a Parser"); return NULL; }
    Parser *B = (Parser *)arg;
    if (A == B || A->finished || B->finished) { PyErr_SetString(PyExc_RuntimeError, "cannot merge these parsers"); return NULL; }
    if (A->has_splice || A->in_summary || B->orphan_frames || A->pid_mode != B->pid_mode ||
        A->ts_mode != B->ts_mode || A->pid_mode == PID_NONE)
        Py_RETURN_FALSE;
    int64_t D = 0;
    if (A->ts_mode == TS_TOD) {
        D = A->day_off;
        if (B->first_tod != NA && A->last_ts != NA && B->first_tod + A->day_off < A->last_ts - HALF_DAY_NS) D += DAY_NS;
    } else if (A->ts_mode == TS_REL) {
        D = A->rel_sum;
    }
    int32_t *nmap = code_map(&A->names, &B->names), *emap = NULL, *smap = NULL;
    if (!nmap || !(emap = code_map(&A->errnos, &B->errnos)) || !(smap = code_map(&A->signals, &B->signals))) {
        free(nmap); free(emap); return NULL;
    }
    PyObject *result = NULL;
    imap_t act, want;
    memset(&act, 0, sizeof(act));
    memset(&want, 0, sizeof(want));
    int64_t base = A->nrows, lbase = A->lineno;
    /* room for all their rows at once: no doubling (and copying) of our columns on the way */
    {
        vec_t *av[NCOLS], *bv[NCOLS];
        columns_of(A, av);
        columns_of(B, bv);
        for (size_t i = 0; i < NCOLS; i++) {
            if (av[i]->n + bv[i]->n <= av[i]->cap) continue;
            char *q = realloc(av[i]->p, av[i]->n + bv[i]->n + 64);
            if (!q) { PyErr_NoMemory(); goto done; }
            av[i]->p = q;
            av[i]->cap = av[i]->n + bv[i]->n + 64;
        }
    }
    /* their rows that their state points at (calls pending, the last row): where they end up here */
    for (size_t i = 0; i < B->pending.cap; i++)
        if (B->pending.used[i] == USED && imap_put(&want, B->pending.vals[i], -1)) goto done;
    if (B->last_row >= 0 && imap_put(&want, B->last_row, -1)) goto done;
    /* their string segments become ours */
    size_t sbase = A->nsegs;
    if (A->nsegs + B->nsegs > A->capsegs) {
        size_t c = A->nsegs + B->nsegs + 16;
        seg_t *ns = realloc(A->segs, c * sizeof(seg_t));
        if (!ns) { PyErr_NoMemory(); goto done; }
        A->segs = ns;
        A->capsegs = c;
    }
    /* their row r becomes ours at base + r, less the rows joined to our pending calls before it (at most
     * one per pending call): the lowest row of a segment may move down by that much, never more */
    int64_t joinable = (int64_t)A->pending.count;
    for (size_t i = 0; i < B->nsegs; i++) {
        seg_t *g = &A->segs[A->nsegs];
        *g = B->segs[i];
        g->last_row += base;
        if (g->first_row != INT64_MAX) g->first_row = g->first_row + base - joinable < 0 ? 0 : g->first_row + base - joinable;
        A->nsegs++;
    }
    B->nsegs = 0;
    for (size_t i = 0; i < A->pending.cap; i++)
        if (A->pending.used[i] == USED && imap_put(&act, A->pending.keys[i], A->pending.vals[i])) goto done;
    int64_t sh = (int64_t)sbase << 32;
    int64_t r = 0;
    for (; r < B->nrows && act.count; r++) { /* while a call of ours may still be joined: row by row */
        int32_t kind = VEC_AT(B->kind, int32_t, r);
        int64_t pid = VEC_AT(B->pid, int64_t, r);
        int64_t ts = VEC_AT(B->ts, int64_t, r), end = VEC_AT(B->end, int64_t, r);
        if (ts != NA) ts = (int64_t)((uint64_t)ts + (uint64_t)D);
        if (end != NA) end = (int64_t)((uint64_t)end + (uint64_t)D);
        int32_t nm = VEC_AT(B->name, int32_t, r), er = VEC_AT(B->errno_, int32_t, r), sg = VEC_AT(B->signal, int32_t, r);
        if (nm >= 0) nm = nmap[nm];
        if (er >= 0) er = emap[er];
        if (sg >= 0) sg = smap[sg];
        span_t a = VEC_AT(B->args, span_t, r), rt = VEC_AT(B->ret, span_t, r), st = VEC_AT(B->stack, span_t, r);
        if (a.len >= 0) a.off += sh;
        if (rt.len >= 0) rt.off += sh;
        if (st.len >= 0) st.off += sh;
        uint8_t o = VEC_AT(B->orig, uint8_t, r);
        if (act.count) {
            long slot = imap_find(&act, pid);
            if (slot >= 0) {
                int64_t ar = act.vals[slot];
                if (kind == K_EXIT || kind == K_KILLED || kind == K_SUPERSEDED || o == 1) {
                    imap_pop(&act, pid, -1);
                } else if (o == 2 || o == 3) {
                    if (nm == VEC_AT(A->name, int32_t, ar)) { /* the other half of our pending call */
                        VEC_AT(A->kind, int32_t, ar) = kind;
                        VEC_AT(A->end, int64_t, ar) = end;
                        VEC_AT(A->dur, int64_t, ar) = VEC_AT(B->dur, int64_t, r);
                        VEC_AT(A->retval, int64_t, ar) = VEC_AT(B->retval, int64_t, r);
                        VEC_AT(A->errno_, int32_t, ar) = er;
                        VEC_AT(A->ret, span_t, ar) = rt;
                        seg_cover(A, rt, ar);
                        if (heap_concat(A, ar, &VEC_AT(A->args, span_t, ar), NULL, 0, a)) goto done;
                        if (st.len >= 0) {
                            span_t *as = &VEC_AT(A->stack, span_t, ar);
                            if (as->len < 0) { *as = st; seg_cover(A, st, ar); }
                            else if (heap_concat(A, ar, as, "\n", 1, st)) goto done;
                        }
                        imap_pop(&act, pid, -1);
                        if (want.count) { long w = imap_find(&want, r); if (w >= 0) want.vals[w] = ar; }
                        continue;
                    }
                    if (o == 3) imap_pop(&act, pid, -1);
                }
            }
        }
        if (VEC_PUSH(A->kind, int32_t, kind) || VEC_PUSH(A->pid, int64_t, pid) || VEC_PUSH(A->ts, int64_t, ts) ||
            VEC_PUSH(A->end, int64_t, end) || VEC_PUSH(A->dur, int64_t, VEC_AT(B->dur, int64_t, r)) ||
            VEC_PUSH(A->name, int32_t, nm) || VEC_PUSH(A->args, span_t, a) || VEC_PUSH(A->ret, span_t, rt) ||
            VEC_PUSH(A->retval, int64_t, VEC_AT(B->retval, int64_t, r)) || VEC_PUSH(A->errno_, int32_t, er) ||
            VEC_PUSH(A->signal, int32_t, sg) || VEC_PUSH(A->stack, span_t, st) ||
            VEC_PUSH(A->line, int64_t, VEC_AT(B->line, int64_t, r) + lbase) || VEC_PUSH(A->orig, uint8_t, o))
            goto done;
        if (want.count) { long w = imap_find(&want, r); if (w >= 0) want.vals[w] = A->nrows; }
        A->nrows++;
    }
    if (r < B->nrows) { /* the rest: appended column by column, on up to `threads` threads */
        /* after a drain our columns' pages are in memory far past the rows kept: copying into them costs
         * no new page, so their pages are moved only when ours are fresh */
        tail_job_t job = {A, B, nmap, emap, smap, r, B->nrows, D, sh, lbase, 0, !A->drained};
        int64_t m = B->nrows - r;
        for (size_t i = 0; want.count && i < want.cap; i++)
            if (want.used[i] == USED && want.keys[i] >= r) want.vals[i] = A->nrows + want.keys[i] - r;
        merge_tail(&job, threads);
        A->nrows += m;
    }
    /* the state of one scanner at the end of their bytes */
    for (size_t i = 0; i < B->pending.cap; i++) {
        if (B->pending.used[i] != USED) continue;
        long w = imap_find(&want, B->pending.vals[i]);
        if (w < 0 || want.vals[w] < 0 || imap_put(&act, B->pending.keys[i], want.vals[w])) goto done;
    }
    imap_free(&A->pending);
    A->pending = act;
    memset(&act, 0, sizeof(act));
    if (B->last_row >= 0) {
        long w = imap_find(&want, B->last_row);
        if (w >= 0 && want.vals[w] >= 0) A->last_row = want.vals[w];
    }
    if (A->ts_mode == TS_TOD && B->last_ts != NA) {
        A->day_off = B->day_off + D;
        A->last_ts = B->last_ts + D;
        if (A->first_tod == NA) A->first_tod = B->first_tod;
    } else if (A->ts_mode == TS_REL) {
        A->rel_sum = (int64_t)((uint64_t)A->rel_sum + (uint64_t)B->rel_sum);
    }
    A->lineno += B->lineno;
    if (shift_list(A->rejects, B->rejects, lbase) || shift_list(A->messages, B->messages, lbase) ||
        shift_list(A->summary, B->summary, lbase))
        goto done;
    if (!A->colour && B->colour) {
        A->colour = Py_BuildValue("(LO)", (long long)(PyLong_AsLongLong(PyTuple_GET_ITEM(B->colour, 0)) + lbase),
                                  PyTuple_GET_ITEM(B->colour, 1));
        if (!A->colour) goto done;
    }
    A->in_summary = B->in_summary;
    A->has_splice = B->has_splice;
    if (B->has_splice) {
        A->splice = B->splice; A->splice_n = B->splice_n; A->splice_line = B->splice_line + lbase;
        B->splice = NULL; B->has_splice = 0;
    }
    B->finished = 1;
    result = Py_True;
    Py_INCREF(result);
done:
    imap_free(&act);
    imap_free(&want);
    free(nmap); free(emap); free(smap);
    return result;
}

/* Return the rows no later line can change, and keep only the others: calls
 * still <unfinished ...> and the last row (stack frames may follow it). Line
 * numbers, codes, clocks and every other state go on as if nothing happened,
 * so the rows of all drains plus finish() are exactly finish()'s rows of one
 * scan, in the same order once sorted by line (rows are made in line order).
 * Side tables (messages, rejects, summary lines) are handed over and restart
 * empty. Rows whose pid is not known yet (no pid prefix) are returned too:
 * "leader" says the pid they were given once it became known. */
static PyObject *Parser_drain(Parser *self, PyObject *unused) {
    (void)unused;
    if (self->finished) { PyErr_SetString(PyExc_RuntimeError, "parser already finished"); return NULL; }
    self->drained = 1;
    int64_t n = self->nrows, m = 0, k = 0;
    uint8_t *keep = calloc((size_t)n + 1, 1);
    int64_t *newi = malloc(((size_t)n + 1) * sizeof(int64_t));
    PyObject *d = NULL, *result = NULL;
    seg_t *old = self->segs;
    size_t nold = self->nsegs;
    int relocated = 0;
    if (!keep || !newi) { PyErr_NoMemory(); goto fail; }
    for (size_t i = 0; i < self->pending.cap; i++)
        if (self->pending.used[i] == USED) keep[self->pending.vals[i]] = 1;
    if (self->last_row >= 0) keep[self->last_row] = 1;
    for (int64_t r = 0; r < n; r++) { if (keep[r]) newi[r] = k++; else { newi[r] = m++; } }
    d = PyDict_New();
    if (!d) goto fail;
#define SETD(key, expr) do { PyObject *o_ = (expr); if (!o_ || PyDict_SetItemString(d, key, o_)) { Py_XDECREF(o_); goto fail; } Py_DECREF(o_); } while (0)
    SETD("rows", PyLong_FromLongLong(m));
    SETD("held", PyLong_FromLongLong(k));
    SETD("lines", PyLong_FromLongLong(self->lineno));
    /* string columns of the rows given out */
    {
        vec_t *cols[3] = {&self->args, &self->ret, &self->stack};
        const char *keys[3] = {"args", "ret_text", "backtrace"};
        for (int c = 0; c < 3; c++) {
            span_t *sp = (span_t *)cols[c]->p;
            int64_t total = 0, nulls = 0, o = 0, j = 0;
            for (int64_t r = 0; r < n; r++) if (!keep[r]) { if (sp[r].len < 0) nulls++; else total += sp[r].len; }
            int64_t *off = malloc(((size_t)m + 1) * sizeof(int64_t));
            char *data = malloc((size_t)total + 1);
            uint8_t *valid = nulls ? calloc((size_t)(m / 8 + 1), 1) : NULL;
            if (!off || !data || (nulls && !valid)) { free(off); free(data); free(valid); PyErr_NoMemory(); goto fail; }
            for (int64_t r = 0; r < n; r++) {
                if (keep[r]) continue;
                off[j] = o;
                if (sp[r].len >= 0) {
                    memcpy(data + o, span_ptr(self, sp[r]), (size_t)sp[r].len);
                    o += sp[r].len;
                    if (valid) valid[j >> 3] |= (uint8_t)(1u << (j & 7));
                }
                j++;
            }
            off[m] = o;
            PyObject *bo = blob_new((char *)off, (Py_ssize_t)((m + 1) * (int64_t)sizeof(int64_t)));
            PyObject *bd = blob_new(data, (Py_ssize_t)total);
            PyObject *bv = valid ? blob_new((char *)valid, (Py_ssize_t)(m / 8 + 1)) : (Py_INCREF(Py_None), Py_None);
            if (!bo || !bd || !bv) { Py_XDECREF(bo); Py_XDECREF(bd); Py_XDECREF(bv); goto fail; }
            SETD(keys[c], Py_BuildValue("(NNN)", bo, bd, bv));
        }
    }
    /* the strings of the rows kept move to new segments; the old ones are returned to the system */
    self->segs = NULL; self->nsegs = self->capsegs = 0;
    relocated = 1;
    {
        vec_t *cols[3] = {&self->args, &self->ret, &self->stack};
        for (int64_t r = 0; r < n; r++) {
            if (!keep[r]) continue;
            for (int c = 0; c < 3; c++) {
                span_t *sp = &VEC_AT(*cols[c], span_t, r);
                if (sp->len < 0) continue;
                int64_t off;
                char *dst = heap_room(self, (size_t)sp->len + 1, newi[r], &off);
                if (!dst) goto fail;
                if (sp->len) memcpy(dst, old[sp->off >> 32].p + (sp->off & 0xffffffffLL), (size_t)sp->len);
                self->segs[self->nsegs - 1].n += (size_t)sp->len;
                sp->off = off;
            }
        }
    }
    for (size_t i = 0; i < nold; i++) seg_free(&old[i]);
    free(old);
    old = NULL;
    /* numeric columns: the rows given out to new buffers, the rows kept to the front */
#define SPLIT(key, vec, T) SPLIT_(key, vec, T, 0)
#define SPLIT_(key, vec, T, seconds_) do { \
        T *out_ = malloc(((size_t)m + 1) * sizeof(T)); \
        if (!out_) { PyErr_NoMemory(); goto fail; } \
        T *in_ = (T *)(vec).p; \
        for (int64_t r = 0; r < n; r++) { if (keep[r]) in_[newi[r]] = in_[r]; else out_[newi[r]] = in_[r]; } \
        (vec).n = (size_t)k * sizeof(T); \
        if (seconds_) ns_to_seconds((char *)out_, m); \
        if (key) SETD((const char *)key, blob_new((char *)out_, (Py_ssize_t)(m * (int64_t)sizeof(T)))); else free(out_); \
    } while (0)
    SPLIT("kind", self->kind, int32_t);
    SPLIT("pid", self->pid, int64_t);
    SPLIT_("ts", self->ts, int64_t, 1);
    SPLIT_("end", self->end, int64_t, 1);
    SPLIT_("dur", self->dur, int64_t, 1);
    SPLIT("name", self->name, int32_t);
    SPLIT("retval", self->retval, int64_t);
    SPLIT("errno", self->errno_, int32_t);
    SPLIT("signal", self->signal, int32_t);
    SPLIT("line", self->line, int64_t);
    SPLIT(NULL, self->args, span_t);
    SPLIT(NULL, self->ret, span_t);
    SPLIT(NULL, self->stack, span_t);
    SPLIT(NULL, self->orig, uint8_t);
#undef SPLIT
#undef SPLIT_
    for (size_t i = 0; i < self->pending.cap; i++)
        if (self->pending.used[i] == USED) self->pending.vals[i] = newi[self->pending.vals[i]];
    if (self->last_row >= 0) self->last_row = newi[self->last_row];
    self->unknown_rows.n = 0;
    if (self->pid_mode == PID_NONE && !self->leader_known)
        for (int64_t r = 0; r < k; r++)
            if (VEC_AT(self->pid, int64_t, r) == NA && VEC_PUSH(self->unknown_rows, int64_t, r)) goto fail;
    self->nrows = k;
    SETD("names", intern_list(&self->names));
    SETD("errnos", intern_list(&self->errnos));
    SETD("signals", intern_list(&self->signals));
    Py_INCREF(self->messages); SETD("messages", self->messages); /* the lists move to the dict */
    Py_INCREF(self->rejects); SETD("rejects", self->rejects);
    Py_INCREF(self->summary); SETD("summary", self->summary);
    Py_DECREF(self->messages); Py_DECREF(self->rejects); Py_DECREF(self->summary);
    self->messages = PyList_New(0);
    self->rejects = PyList_New(0);
    self->summary = PyList_New(0);
    if (!self->messages || !self->rejects || !self->summary) goto fail;
    SETD("leader", self->leader_known && self->pid_mode == PID_NONE ? PyLong_FromLongLong(self->leader_pid)
                                                                   : (Py_INCREF(Py_None), Py_None));
#undef SETD
    result = d;
    d = NULL;
fail:
    if (old && relocated) { for (size_t i = 0; i < nold; i++) seg_free(&old[i]); free(old); }
    Py_XDECREF(d);
    free(keep); free(newi);
    return result;
}

static PyMethodDef Parser_methods[] = {
    {"feed", (PyCFunction)Parser_feed, METH_O, "Parse a block of whole lines (bytes)."},
    {"finish", (PyCFunction)Parser_finish, METH_VARARGS,
     "finish(threads=1): return the raw columns and side tables (the strings gathered on up to `threads` threads)."},
    {"drain", (PyCFunction)Parser_drain, METH_NOARGS,
     "Return the rows no later line can change (as finish() does) and keep scanning with the others."},
    {"merge", (PyCFunction)Parser_merge, METH_VARARGS,
     "merge(other, threads=1): append a parser that scanned the following bytes (on up to `threads` threads); "
     "False when the split point cannot be joined."},
    {NULL, NULL, 0, NULL},
};

static PyObject *Parser_get_colour(Parser *self, void *closure) {
    (void)closure;
    PyObject *c = self->colour ? self->colour : Py_None;
    Py_INCREF(c);
    return c;
}
static PyGetSetDef Parser_getset[] = {
    {"colour", (getter)Parser_get_colour, NULL, "(line, text) of the first line with an ANSI colour escape, or None", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ParserType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "workbench.syscalls._native.Parser",
    .tp_basicsize = sizeof(Parser),
    .tp_dealloc = (destructor)Parser_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Parser(pid_mode, ts_mode, fixed_pid=NA): native strace scanner",
    .tp_methods = Parser_methods,
    .tp_getset = Parser_getset,
    .tp_init = (initproc)Parser_init,
    .tp_new = PyType_GenericNew,
};

/* skip_lines(buffer, n) -> (offset just past the n-th newline or len(buffer), newlines found) */
static PyObject *mod_skip_lines(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer b;
    long long want;
    if (!PyArg_ParseTuple(args, "y*L", &b, &want)) return NULL;
    const char *s = b.buf;
    Py_ssize_t n = b.len, i = 0;
    long long got = 0;
    Py_BEGIN_ALLOW_THREADS
    while (got < want && i < n) {
        const char *q = memchr(s + i, '\n', (size_t)(n - i));
        if (!q) { i = n; break; }
        i = (Py_ssize_t)(q - s) + 1;
        got++;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    return Py_BuildValue("(nL)", i, got);
}

static PyMethodDef module_methods[] = {
    {"skip_lines", mod_skip_lines, METH_VARARGS,
     "skip_lines(buffer, n) -> (offset past the n-th newline, or len(buffer); newlines found)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_native", "Native strace scanner.", -1, module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
    if (PyType_Ready(&BlobType) < 0 || PyType_Ready(&ParserType) < 0) return NULL;
#ifdef __linux__
    long pg = sysconf(_SC_PAGESIZE);
    if (pg > 0 && SEG_SIZE % (size_t)pg == 0) page_bytes = (size_t)pg;
#endif
    PyObject *m = PyModule_Create(&moduledef);
    if (!m) return NULL;
    Py_INCREF(&ParserType);
    if (PyModule_AddObject(m, "Parser", (PyObject *)&ParserType) < 0) { Py_DECREF(&ParserType); Py_DECREF(m); return NULL; }
    return m;
}
