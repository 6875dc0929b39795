# expect: at step 0 rank 1 sends unit 0 while it also receives it in the same step (from rank 0): read/write hazard; receive into a scratch unit (`at`) and combine it in the next step
# ranks: 1..4
# The recursive-doubling exchange: both sides of a pair send and reduce the same unit in one step. The executors
# read a sender's unit while its receives are applied (no snapshot), so it is refused; docs/language.md 5 shows
# the idiom (tests/verify/ok/rd_scratch.dsl).
algorithm rd implements all_reduce {
  units 1
  for k in 0 .. floor_log2(p) - 1 { step { send all to r ^ pow2(k) reduce } }
}
