/* The floor for a RESP load at one client thread: C connections on one epoll loop, each
 * keeping P requests in flight (90% GET / 10% SET of KEYS keys, VALUE-byte values), one
 * write and one read per batch, replies only counted (no parsing beyond finding their
 * ends, no value checks). Whatever a real load generator does beyond this is its overhead.
 *
 *   cc -O2 -o resp-floor bench/resp-floor.c
 *   resp-floor PORT CONNS PIPELINE SECONDS [KEYS=100000] [VALUE=100]
 *
 * Prints: ops_per_s=N client_cpu_us_per_op=X (CPU: this process, over the whole run,
 * after a one-second warmup that is not counted).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct conn { int fd; int inflight; char in[1 << 16]; size_t len; };

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static double cpu(void) { struct rusage u; getrusage(RUSAGE_SELF, &u); return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6; }

static char value[1 << 20];
static long keys = 100000, vlen = 100;

/* One request appended at out; returns its length. */
static size_t request(char *out) {
    unsigned long k = next() % keys;
    if (next() % 10 == 0)
        return sprintf(out, "*3\r\n$3\r\nSET\r\n$14\r\nkey:%010lu\r\n$%ld\r\n%s\r\n", k, vlen, value);
    return sprintf(out, "*2\r\n$3\r\nGET\r\n$14\r\nkey:%010lu\r\n", k);
}

/* Length of the complete reply at p (of n bytes), or 0. Handles +, -, :, $ replies. */
static size_t reply(const char *p, size_t n) {
    const char *nl = memchr(p, '\n', n);
    if (!nl) return 0;
    size_t head = nl - p + 1;
    if (p[0] != '$') return head;
    long len = atol(p + 1);
    if (len < 0) return head;
    return n >= head + len + 2 ? head + len + 2 : 0;
}

int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: resp-floor PORT CONNS PIPELINE SECONDS [KEYS] [VALUE]\n"); return 2; }
    int port = atoi(argv[1]), conns = atoi(argv[2]), pipe = atoi(argv[3]);
    double secs = atof(argv[4]);
    if (argc > 5) keys = atol(argv[5]);
    if (argc > 6) vlen = atol(argv[6]);
    memset(value, 'v', vlen);
    int ep = epoll_create1(0);
    struct conn *cs = calloc(conns, sizeof *cs);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    static char out[1 << 20];
    for (int i = 0; i < conns; i++) {
        cs[i].fd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(cs[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(cs[i].fd, (struct sockaddr *)&a, sizeof a)) { perror("connect"); return 1; }
        struct epoll_event e = { .events = EPOLLIN, .data.ptr = &cs[i] };
        epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &e);
        size_t n = 0;
        for (int j = 0; j < pipe; j++) n += request(out + n);
        if (write(cs[i].fd, out, n) != (ssize_t)n) { perror("write"); return 1; }
        cs[i].inflight = pipe;
    }
    double start = now(), measure = start + 1.0, end = measure + secs, cpu0 = 0;
    long ops = 0;
    int measuring = 0;
    struct epoll_event ev[256];
    for (;;) {
        double t = now();
        if (!measuring && t >= measure) { measuring = 1; ops = 0; cpu0 = cpu(); start = t; }
        if (t >= end) break;
        int n = epoll_wait(ep, ev, 256, 100);
        for (int i = 0; i < n; i++) {
            struct conn *c = ev[i].data.ptr;
            ssize_t r = read(c->fd, c->in + c->len, sizeof c->in - c->len);
            if (r <= 0) { if (r < 0 && errno == EAGAIN) continue; fprintf(stderr, "connection closed\n"); return 1; }
            c->len += r;
            size_t pos = 0, got = 0, m;
            while ((m = reply(c->in + pos, c->len - pos)) > 0) { pos += m; got++; }
            memmove(c->in, c->in + pos, c->len - pos);
            c->len -= pos;
            c->inflight -= got;
            ops += got;
            if (c->inflight == 0) {
                size_t w = 0;
                for (int j = 0; j < pipe; j++) w += request(out + w);
                if (write(c->fd, out, w) != (ssize_t)w) { perror("write"); return 1; }
                c->inflight = pipe;
            }
        }
    }
    double took = now() - start, used = cpu() - cpu0;
    printf("ops_per_s=%.1f client_cpu_us_per_op=%.3f\n", ops / took, used * 1e6 / ops);
    return 0;
}
