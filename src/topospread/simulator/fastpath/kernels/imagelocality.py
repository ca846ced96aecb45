"""ImageLocality's kernel: its raw scores are the pod shape's (they are already on the
0-100 scale: no normalization); they read how many nodes hold each image, so a shape scored
by it is not carried over a rebuild while any node reports images."""

from __future__ import annotations

from topospread.simulator.fastpath.kernels.base import StaticKernel


class ImageLocality(StaticKernel):
    static_score = True
    reads_images = True
