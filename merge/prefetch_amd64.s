#include "textflag.h"

// func prefetchEvent(p uintptr)
TEXT ·prefetchEvent(SB),NOSPLIT,$0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	RET

// func prefetchLines6(a, b, c, d, e, f uintptr)
TEXT ·prefetchLines6(SB),NOSPLIT,$0-48
	MOVQ a+0(FP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	MOVQ b+8(FP), AX
	PREFETCHT0 (AX)
	MOVQ c+16(FP), AX
	PREFETCHT0 (AX)
	MOVQ d+24(FP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	MOVQ e+32(FP), AX
	PREFETCHT0 (AX)
	MOVQ f+40(FP), AX
	PREFETCHT0 (AX)
	RET

// func prefetchLines4(a, b, c uintptr)
TEXT ·prefetchLines4(SB),NOSPLIT,$0-24
	MOVQ a+0(FP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	MOVQ b+8(FP), AX
	PREFETCHT0 (AX)
	MOVQ c+16(FP), AX
	PREFETCHT0 (AX)
	RET

// func prefetchSpan(p uintptr, lines int)
TEXT ·prefetchSpan(SB),NOSPLIT,$0-16
	MOVQ p+0(FP), AX
	MOVQ lines+8(FP), CX
	TESTQ CX, CX
	JLE done
loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	DECQ CX
	JNZ loop
done:
	RET
