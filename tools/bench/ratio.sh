# Sourced by the benchmarks: statistics of repeated paired runs.

# The geometric mean of a/b over paired repetitions and its 95 % confidence
# interval (Student's t on the log ratios): "0.981 [0.950-1.013]".
# $1, $2: the a and b values, space-separated, in repetition order.
ratio_ci_of() {
  paste <(echo "$1" | tr ' ' '\n' | grep -v '^$') <(echo "$2" | tr ' ' '\n' | grep -v '^$') |
    awk 'BEGIN { split("12.71 4.30 3.18 2.78 2.57 2.45 2.36 2.31 2.26 2.23 2.20 2.18 2.16 2.14 2.13 2.12 2.11 2.10 2.09 2.09", t) }
         $2 > 0 && $1 > 0 { x = log($1 / $2); n++; s += x; ss += x * x }
         END {
           if (n == 0) { printf "-"; exit }
           if (n < 2) { printf "%.3f", exp(s / n); exit }
           m = s / n; sd = sqrt((ss - n * m * m) / (n - 1)); q = (n - 1 <= 20) ? t[n - 1] : 1.96 + 2.4 / (n - 1)
           h = q * sd / sqrt(n)
           printf "%.3f [%.3f-%.3f]", exp(m), exp(m - h), exp(m + h)
         }'
}

# The median and the range of space-separated values on stdin.
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
range() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f-%.0f", lo, hi }'; }

# Which repetitions run a pair's second side first: $1 repetitions, $2 seed;
# prints one 0 or 1 per repetition, half of them ones, in a seeded random
# order. Not a strict alternation (AB BA AB BA ...): every mount of a store
# recovers its write-ahead log into a new RocksDB level-0 file, so a
# compaction comes at about every fourth mount, and with that alternation an
# event every four runs falls on the same side each time: a bias that no
# number of repetitions averages out.
swap_order_of() {
  awk -v n="$1" -v seed="$2" 'BEGIN {
    srand(seed); for (i = 1; i <= n; i++) v[i] = (i <= int(n / 2)) ? 1 : 0
    for (i = n; i > 1; i--) { j = int(rand() * i) + 1; t = v[i]; v[i] = v[j]; v[j] = t }
    for (i = 1; i <= n; i++) printf "%d ", v[i] }'
}
