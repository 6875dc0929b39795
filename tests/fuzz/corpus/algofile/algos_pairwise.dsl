algorithm pairwise implements all_to_all, all_to_all_v {
  units p * p
  from all
  step i in 1 .. p - 1 { send unit r * p + (r + i) % p to (r + i) % p }
}
