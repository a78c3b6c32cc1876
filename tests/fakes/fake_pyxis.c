/* A stand-in for pyxis (NVIDIA's container SPANK plugin; neither it nor
 * enroot is in Debian) in the one respect that matters to gangway: in its
 * slurm_spank_task_init it moves the task into another mount namespace, the
 * container's, before SLURM execs the command. Built and loaded by
 * tests/integration/container_order.sh, listed before or after gangway in
 * plugstack.conf.
 *
 * Arguments on its plugstack line:
 *   hide=DIR   an empty tmpfs over DIR in the container: an image without
 *              gangway installed (DIR is gangway's install directory)
 *   mark=DIR   a tmpfs over DIR holding a file "in-container", so that the
 *              command can tell that it runs in the container
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <slurm/spank.h>

SPANK_PLUGIN(fake_pyxis, 1);

static const char *arg(int ac, char **av, const char *key) {
    size_t n = strlen(key);
    for (int i = 0; i < ac; i++)
        if (strncmp(av[i], key, n) == 0 && av[i][n] == '=') return av[i] + n + 1;
    return NULL;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av) {
    (void)sp;
    const char *hide = arg(ac, av, "hide"), *mark = arg(ac, av, "mark");
    if (unshare(CLONE_NEWNS) != 0) {
        slurm_error("fake_pyxis: unshare(CLONE_NEWNS): %s", strerror(errno));
        return -1;
    }
    /* Our mounts stay in the container, as a container runtime's do. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        slurm_error("fake_pyxis: making / private: %s", strerror(errno));
        return -1;
    }
    if (hide && mount("tmpfs", hide, "tmpfs", 0, "size=64k") != 0) {
        slurm_error("fake_pyxis: hiding %s: %s", hide, strerror(errno));
        return -1;
    }
    if (mark) {
        char path[4096];
        if (mount("tmpfs", mark, "tmpfs", 0, "size=64k") != 0) {
            slurm_error("fake_pyxis: mounting %s: %s", mark, strerror(errno));
            return -1;
        }
        snprintf(path, sizeof path, "%s/in-container", mark);
        int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) {
            slurm_error("fake_pyxis: %s: %s", path, strerror(errno));
            return -1;
        }
        close(fd);
    }
    return 0;
}
