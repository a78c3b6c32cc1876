/* TEST DOUBLE support, shared by fake_cuda.c, fake_nccl.c and fake_verbs.c
 * (each is its own shared library, so this is a header of static functions,
 * not another .so).
 *
 * Faults are injected per node by name lists in the environment
 * (GANGWAY_FAKE_SLOW_HOSTS=node1,node3). The name is SLURMD_NODENAME when slurmd
 * started us, because in the namespace test cluster every node may share the
 * container's hostname; gethostname() otherwise. */
#ifndef GANGWAY_FAKE_HOST_H
#define GANGWAY_FAKE_HOST_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline const char *fake_node_name(char *buf, size_t len) {
    const char *s = getenv("SLURMD_NODENAME");
    if (s && *s) {
        strncpy(buf, s, len - 1);
        buf[len - 1] = '\0';
    } else if (gethostname(buf, len) != 0) {
        strncpy(buf, "unknown", len);
    }
    buf[len - 1] = '\0';
    return buf;
}

/* Whether the comma list `list` holds `name` as a whole entry. */
static inline int fake_name_in_list(const char *list, const char *name) {
    const size_t n = strlen(name);
    while (list && *list) {
        const char *end = strchr(list, ',');
        const size_t len = end ? (size_t)(end - list) : strlen(list);
        if (len == n && n > 0 && strncmp(list, name, n) == 0) return 1;
        list = end ? end + 1 : NULL;
    }
    return 0;
}

/* Whether this node is named in the list held by environment variable `var`. */
static inline int fake_this_host_listed(const char *var) {
    const char *list = getenv(var);
    char name[256];
    return list && *list && fake_name_in_list(list, fake_node_name(name, sizeof name));
}

#endif
