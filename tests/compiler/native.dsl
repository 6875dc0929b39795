# native.dsl - functions for the C that `stitchc emit` writes in their place (codegen/emit_native.c), checked
# against the step machine by compiler.emit.native (tests/compiler/emit_check.c): every n_* of one parameter must
# become native C and v_* must not; on any input both give the same value or both fail, and a layout that fails
# reports the machine's message. Emitted with --no-verify: `broken` fails at p = 5 on purpose.

algorithm natives implements all_reduce {
  let half = p / 2
  fn n_floor(x) = (x - 3) / (x % 5 - 2) + (x - 7) % (p - 2)      # floors of negatives; zero divisors
  fn n_wide(x) = x * x * x * 1000003 + (1 << x % 70) - (x >> x % 3) # overflow; shift counts out of range
  fn n_logs(x) = floor_log2(x) + ceil_log2(x) + pow2(x % 64) + min(x, p, 3) * max(-x, 2) + gcd(x, p) + lcm(x, 6)
  fn n_bits(x) = (x & 12 | x ^ ~p) + (if x < 3 and not (x == p) or x >= 9 then -x else x != 1)
  fn n_deep(x) = if x <= 0 then 0 else n_deep(x - 1) + 1          # recursion: fails from 200 calls deep
  fn n_loop(x) = count(x % 1000, 0)                                # a tail call, a loop: deeper than 200 calls
  fn spin(x) = count(x, 0)               # a loop without bound: the calls budget and the fuel end it (one check)
  fn count(x, acc) = if x <= 0 then acc else count(x - 1, acc + x)
  fn seven() = 7
  fn n_none(x) = seven() * x - p                                   # a call of a function of no parameters
  fn v_topo(x) = size(group(x % p)) + x                            # a topology query: the machine's
  fn v_let(x) = x + half                                           # reads a let: the machine's
  fn rot(u) = (u + seven()) % p                                    # the layout, a permutation
  units p
  layout rot
  phase reduce_scatter using ring
  phase all_gather using ring
}

algorithm broken implements all_reduce {
  fn n_shift(u) = (u + 12 / (p - 5)) % p                           # division by zero at p = 5
  units p
  layout n_shift
  phase reduce_scatter using ring
  phase all_gather using ring
}

algorithm ring implements reduce_scatter {
  units p
  from { (r - 1) % p }
  step t in 0 .. p - 2 {
    send unit (r - 1 - t) % p to (r + 1) % p reduce
  }
}

algorithm ring implements all_gather {
  units p
  from { (r - 1) % p }
  step t in 0 .. p - 2 {
    send unit (r - t) % p to (r + 1) % p
  }
}
