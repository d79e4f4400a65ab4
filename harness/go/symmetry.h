/* KataGo's 8 board symmetries (SymmetryHelpers in neuralnet/nninputs.cpp): bit 0 flips y, bit 1
 * flips x, bit 2 transposes, the transpose applying only when the buffer is square (h == w), as
 * KataGo does. Planes are [c][h][w], x fastest. */
#ifndef HC_SYMMETRY_H
#define HC_SYMMETRY_H

/* copyInputsWithSymmetry: dst = the planes of src seen under symmetry. src != dst. */
void hc_sym_apply_planes(const float *src, float *dst, int c, int h, int w, int symmetry);
/* copyOutputsWithSymmetry: maps planes computed at symmetry back to the board's orientation. */
void hc_sym_unapply_planes(const float *src, float *dst, int c, int h, int w, int symmetry);
/* The same for a policy vector of h*w + 1 entries (pass last, unchanged). */
void hc_sym_unapply_policy(const float *src, float *dst, int h, int w, int symmetry);
/* SymmetryHelpers::invert and compose. */
int hc_sym_invert(int symmetry);
int hc_sym_compose(int first, int next);

#endif
