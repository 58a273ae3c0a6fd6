/*
 * dlopen_main.c: not linked against MPI. dlopens libmpi, then the extension
 * dlopen_ext.so, and runs it, like `python -c "from mpi4py import MPI"`.
 * With "local" both are opened RTLD_LOCAL, as Python opens extension
 * modules: libmpi's symbols are then in no global scope, and a preloaded
 * tracer can only find them by looking at the loaded objects.
 *
 * usage: dlopen_main <libmpi path> <dlopen_ext.so path> [global|local]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: dlopen_main <libmpi> <ext.so>\n");
		return 2;
	}
	int scope = argc > 3 && strcmp(argv[3], "local") == 0 ? RTLD_LOCAL : RTLD_GLOBAL;
	if (dlopen(argv[1], RTLD_NOW | scope) == NULL) {
		fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
		return 2;
	}
	void *h = dlopen(argv[2], RTLD_NOW | scope);
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
