# An algorithm that compiles but cannot be instantiated: `show` must point at the failing line.
algorithm boom implements all_reduce {
  units p
  step {
    send unit 1 / (p - p) to (r + 1) % p
  }
}
