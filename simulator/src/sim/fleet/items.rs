//! Items: the sweep's groups numbered without listing pairs (tile by
//! tile), and shards, contiguous ranges of item numbers.

/// One shard of a sweep: `k` of `n`, counted from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which, 1..=n.
    pub k: u64,
    /// How many.
    pub n: u64,
}

impl Shard {
    /// The whole sweep as one shard.
    pub const ALL: Shard = Shard { k: 1, n: 1 };

    /// Parses `K/N` (1 <= K <= N).
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("--shard {s:?}: expected K/N, e.g. 3/16"))?;
        let k: u64 = k
            .trim()
            .parse()
            .map_err(|_| format!("--shard {s:?}: K is not a number"))?;
        let n: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("--shard {s:?}: N is not a number"))?;
        if n == 0 || k == 0 || k > n {
            return Err(format!("--shard {s:?}: K must be 1 to N, and N at least 1"));
        }
        Ok(Shard { k, n })
    }

    /// The items of this shard out of `items`: the K-th of N contiguous
    /// ranges, as even as whole items allow.
    pub fn range(self, items: u64) -> std::ops::Range<u64> {
        let at = |k: u64| ((u128::from(items) * u128::from(k)) / u128::from(self.n)) as u64;
        at(self.k - 1)..at(self.k)
    }

    /// The shard of `n` that item `i` of `items` falls in.
    pub fn of(i: u64, items: u64, n: u64) -> u64 {
        (1..=n)
            .find(|&k| Shard { k, n }.range(items).contains(&i))
            .unwrap_or(n)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// Jobs per side of a tile of pairs (see the module's documentation).
pub const TILE: u64 = 64;

/// The `g`-th ordered pair `(h, l)`, `h != l`, of `n` jobs in tile-major
/// order: tiles of [`TILE`] x [`TILE`] over (high, low), row-major; inside a
/// tile, row-major; the diagonal tiles leave out `h == l`.
pub fn ordered_pair(g: u64, n: u64) -> (u64, u64) {
    let t = TILE;
    let side = |x: u64| t.min(n - x * t);
    let th = g / (t * (n - 1));
    let hs = side(th);
    let r = g - th * t * (n - 1);
    let before = th * hs * t;
    if r < before {
        // A full tile left of the diagonal.
        let (tl, o) = (r / (hs * t), r % (hs * t));
        return (th * t + o / t, tl * t + o % t);
    }
    let r = r - before;
    let diagonal = hs * (hs - 1);
    if r < diagonal {
        let (a, b) = (r / (hs - 1), r % (hs - 1));
        return (th * t + a, th * t + if b >= a { b + 1 } else { b });
    }
    let r = r - diagonal;
    let tl = th + 1 + r / (hs * t);
    let o = r % (hs * t);
    let w = side(tl);
    (th * t + o / w, tl * t + o % w)
}

/// The `g`-th pair of `high` x `low` (sizes), in tile-major order.
pub fn cross_pair(g: u64, high: u64, low: u64) -> (u64, u64) {
    let t = TILE;
    let th = g / (t * low);
    let hs = t.min(high - th * t);
    let r = g - th * t * low;
    let tl = r / (hs * t);
    let o = r % (hs * t);
    let w = t.min(low - tl * t);
    (th * t + o / w, tl * t + o % w)
}

/// The groups of a sweep, numbered without materializing pairs.
#[derive(Debug, Clone)]
pub(super) enum Groups {
    /// Every ordered pair of `n` jobs.
    OrderedPairs(usize),
    /// Each of `high` beside each of `low`.
    Cross { high: Vec<usize>, low: Vec<usize> },
    /// Listed groups (more than two jobs per GPU).
    Listed(Vec<Vec<usize>>),
}

impl Groups {
    pub(super) fn count(&self) -> u64 {
        match self {
            Groups::OrderedPairs(n) => (*n as u64) * (n.saturating_sub(1) as u64),
            Groups::Cross { high, low } => (high.len() * low.len()) as u64,
            Groups::Listed(v) => v.len() as u64,
        }
    }

    pub(super) fn get(&self, g: u64) -> Vec<usize> {
        match self {
            Groups::OrderedPairs(n) => {
                let (h, l) = ordered_pair(g, *n as u64);
                vec![h as usize, l as usize]
            }
            Groups::Cross { high, low } => {
                let (h, l) = cross_pair(g, high.len() as u64, low.len() as u64);
                vec![high[h as usize], low[l as usize]]
            }
            Groups::Listed(v) => v[g as usize].clone(),
        }
    }
}

/// Most groups of more than two jobs one spec may list (they are kept in
/// memory; pairs are numbered instead and have no such limit).
pub const MAX_LISTED_GROUPS: u128 = 10_000_000;

/// `n` choose `k`, saturating.
pub(super) fn binomial(n: u128, k: u128) -> u128 {
    if k > n {
        return 0;
    }
    (0..k).fold(1u128, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

/// Every combination of `k` of `from`, in lexicographic order.
pub(super) fn combinations(from: &[usize], k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for i in 0..from.len() {
        for mut rest in combinations(&from[i + 1..], k - 1) {
            rest.insert(0, from[i]);
            out.push(rest);
        }
    }
    out
}
