# strided_ranges.dsl - comprehensions of ranges compiled as SET_STRIDE 2 (sr) against the same sets made by the
# loop (sr_loop: a filter keeps the compiler from the strided form); tests/compiler.cmake compares their schedules.
# Rank r owns units 3r .. 3r + 2 and sends them to every other rank: ranges with a negative slope, overlapping ones,
# empty ones (b < a) and a comprehension whose range of values is empty.
algorithm sr implements all_gather {
  units 3 * p
  for d in 1 .. p - 1 {
    step {
      send { 3 * r + 1 - i .. 3 * r + 1 : i in 0 .. 1 } to (r + d) % p
      send { 3 * r + 2 * i .. 3 * r + 3 * i - 1 : i in 0 .. 1 } to (r + d) % p
      send { 3 * r + i .. 3 * r + i : i in 5 .. 4 } to (r + d) % p
    }
  }
}

algorithm sr_loop implements all_gather {
  units 3 * p
  for d in 1 .. p - 1 {
    step {
      send { 3 * r + 1 - i .. 3 * r + 1 : i in 0 .. 1 if true } to (r + d) % p
      send { 3 * r + 2 * i .. 3 * r + 3 * i - 1 : i in 0 .. 1 if true } to (r + d) % p
      send { 3 * r + i .. 3 * r + i : i in 5 .. 4 if true } to (r + d) % p
    }
  }
}
