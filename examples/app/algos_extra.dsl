# algos_extra.dsl - the example project's own algorithm file (examples/app/): not in algos.dsl, compiled into the
# program at build time (stitch_add_dsl, or `stitchc emit` by hand in the Makefile) and run by name.

# Star all_reduce: rank 0 is the hub. Every other rank in turn adds its vector into rank 0's, one per step so that
# no two reductions land on the same unit at once (and the sum is taken in rank order 1, 2, ..., p-1 on every run);
# then rank 0 sends the total to everyone in one step. 2(p-1) messages of the whole vector, all through rank 0:
# a teaching example, slower than ring for large p, bit-identical everywhere like every stitch algorithm.
algorithm star implements all_reduce {
  units 1
  step t in 1 .. p - 1 {
    if r == t { send unit 0 to 0 reduce }
  }
  step {
    if r == 0 { for k in 1 .. p - 1 { send unit 0 to k } }
  }
}
