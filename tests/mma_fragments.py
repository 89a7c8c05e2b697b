# mma_fragments.py - checks, without a GPU, the ldmatrix addresses and
# register-to-fragment mapping of pp__matmul_mma (pp_cuda_gpt.cuh) for all
# four smem tile layouts: the addresses are copied from the kernel, ldmatrix
# (.x4, with and without .trans) and mma.sync m16n8k16 are emulated from the
# PTX ISA's fragment tables, and each warp's 64 x 32 result of one K step is
# compared with a plain product. Keep the address lines in step with the
# kernel. Usage: python3 tests/mma_fragments.py   (prints one ok per layout)
# emulate the ldmatrix/mma addressing of pp__matmul_mma for one warp tile (64x32) and one kk step
import random
random.seed(0)
def randm(r,c): return [[random.gauss(0,1) for _ in range(c)] for _ in range(r)]
def zeros(n): return [0.0]*n
BM=BN=128; BK=32; PAD=8
def ldsm(smem, ld, addrs, trans):
    # addrs[l] = element offset supplied by lane l; returns regs[lane][j] = (lo, hi) values
    regs=[[None]*4 for _ in range(32)]
    for j in range(4):
        rows=[addrs[8*j+i] for i in range(8)]
        M=[[smem[r+c] for c in range(8)] for r in rows]  # stored 8x8
        for t in range(32):
            g,q=t//4,t%4
            if not trans: regs[t][j]=(M[g][2*q],M[g][2*q+1])
            else: regs[t][j]=(M[2*q][g],M[2*q+1][g])
    return regs
def mma(c, a, b0, b1):
    # c[lane] = [c0..c3]; a[lane]=4 regs (pairs); b0,b1 per lane pairs. Reconstruct A(16x16), B(16x8)
    A=[[0.0]*16 for _ in range(16)]; B=[[0.0]*8 for _ in range(16)]
    for t in range(32):
        g,q=t//4,t%4
        for h in range(2):
            A[g][2*q+h]=a[t][0][h]; A[g+8][2*q+h]=a[t][1][h]; A[g][8+2*q+h]=a[t][2][h]; A[g+8][8+2*q+h]=a[t][3][h]
            B[2*q+h][g]=b0[t][h]; B[8+2*q+h][g]=b1[t][h]
    D=[[sum(A[i][k]*B[k][j] for k in range(16)) for j in range(8)] for i in range(16)]
    for t in range(32):
        g,q=t//4,t%4
        c[t][0]+=D[g][2*q]; c[t][1]+=D[g][2*q+1]; c[t][2]+=D[g+8][2*q]; c[t][3]+=D[g+8][2*q+1]
for AK in (True,False):
  for BKc in (True,False):
    Am=randm(BM,BK); Bm=randm(BK,BN)  # logical A(m,k), B(k,n)
    lda=BK+PAD if AK else BM+PAD; ldb=BK+PAD if BKc else BN+PAD
    As=zeros(BM*(BK+PAD)+BK*(BM+PAD)); Bs=zeros(BM*(BK+PAD)+BK*(BM+PAD))
    for m in range(BM):
        for k in range(BK):
            if AK: As[m*lda+k]=Am[m][k]
            else: As[k*lda+m]=Am[m][k]
    for k in range(BK):
        for n in range(BN):
            if BKc: Bs[n*ldb+k]=Bm[k][n]
            else: Bs[k*ldb+n]=Bm[k][n]
    for wm,wn in ((0,0),(1,3),(1,1)):
     if True:
      acc=[[[[0.0]*4 for _ in range(32)] for j in range(4)] for i in range(4)]
      for kk in range(0,BK,16):
        fa=[];fb=[[None,None] for _ in range(4)]
        for i in range(4):
            m=wm*64+i*16
            addrs=[]
            for l in range(32):
                l7,l8,l16=l&7,(l>>3)&1,l>>4
                addrs.append((m+l7+8*l8)*lda+kk+8*l16 if AK else (kk+l7+8*l16)*lda+m+8*l8)
            fa.append(ldsm(As,lda,addrs,not AK))
        for jj in range(2):
            n=wn*32+jj*16
            addrs=[]
            for l in range(32):
                l7,l8,l16=l&7,(l>>3)&1,l>>4
                addrs.append((n+l7+8*l16)*ldb+kk+8*l8 if BKc else (kk+l7+8*l8)*ldb+n+8*l16)
            r=ldsm(Bs,ldb,addrs,not BKc)
            fb[2*jj][0]=[r[t][0] for t in range(32)]; fb[2*jj][1]=[r[t][1] for t in range(32)]
            fb[2*jj+1][0]=[r[t][2] for t in range(32)]; fb[2*jj+1][1]=[r[t][3] for t in range(32)]
        for i in range(4):
            for j in range(4):
                mma(acc[i][j], fa[i], fb[j][0], fb[j][1])
      err=0
      for i in range(4):
        for j in range(4):
          for t in range(32):
            g,q=t//4,t%4
            for e in range(4):
              gm=wm*64+i*16+g+(8 if e>=2 else 0); gn=wn*32+j*8+2*q+(e&1)
              err=max(err,abs(acc[i][j][t][e]-sum(Am[gm][k]*Bm[k][gn] for k in range(BK))))
      assert err<1e-9,(AK,BKc,wm,wn,err)
    print("AK",AK,"BK",BKc,"ok")
