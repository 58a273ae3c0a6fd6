#include "textflag.h"

// func prefetchEvent(p uintptr)
TEXT ·prefetchEvent(SB),NOSPLIT,$0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	RET
