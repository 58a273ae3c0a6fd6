/*
 * dlopen_main.c: not linked against MPI. dlopens libmpi (RTLD_GLOBAL), then
 * the extension dlopen_ext.so, and runs it, like `python -c "from mpi4py
 * import MPI"`.
 *
 * usage: dlopen_main <libmpi path> <dlopen_ext.so path>
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: dlopen_main <libmpi> <ext.so>\n");
		return 2;
	}
	if (dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL) == NULL) {
		fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
		return 2;
	}
	void *h = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL);
	if (h == NULL) {
		fprintf(stderr, "dlopen %s: %s\n", argv[2], dlerror());
		return 2;
	}
	int (*run)(void);
	*(void **)&run = dlsym(h, "gclock_test_run");
	if (run == NULL) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 2;
	}
	return run();
}
