;; Vector-search inner loops in WebAssembly (loaded by kernels.ts). `npm run build:kernels` compiles this
;; file into kernels-wasm.ts; test/search/vector-kernels.test.ts fails when that file is out of date.
;;
;; Plain scalar code: the same loop in JavaScript pays a bounds check and a byte load per lookup, and runs
;; ~2.2x slower under Bun (measured on 1M near-real 512-d vectors: 4.0 against 1.8 ms per 50k codes).
(module
  (memory (export "memory") 1)

  ;; Product-quantized scores (vector/pq.ts): for each of `count` codes of `parts` bytes stored one after
  ;; another from `codes`, writes to `out` (f32 each) the sum over parts p of table[p * 64 + code[p]], the
  ;; table being f32 values, 64 centroids (256 bytes) per part. Even parts are summed in one register and
  ;; odd parts in another, and the two added at the end.
  (func (export "pqScores") (param $codes i32) (param $count i32) (param $parts i32) (param $table i32) (param $out i32)
    (local $end i32) (local $c i32) (local $quadsEnd i32) (local $codeEnd i32) (local $t i32)
    (local $even f32) (local $odd f32) (local $quad i32)
    (local.set $end (i32.add (local.get $codes) (i32.mul (local.get $count) (local.get $parts))))
    (block $done
      (loop $code
        (br_if $done (i32.ge_u (local.get $codes) (local.get $end)))
        (local.set $even (f32.const 0))
        (local.set $odd (f32.const 0))
        (local.set $c (local.get $codes))
        (local.set $t (local.get $table))
        (local.set $codeEnd (i32.add (local.get $codes) (local.get $parts)))
        (local.set $quadsEnd (i32.add (local.get $codes) (i32.and (local.get $parts) (i32.const -4))))
        ;; Four parts per step: one 32-bit load holds their four code bytes (little-endian).
        (block $quadsDone
          (loop $quads
            (br_if $quadsDone (i32.ge_u (local.get $c) (local.get $quadsEnd)))
            (local.set $quad (i32.load align=1 (local.get $c)))
            (local.set $even (f32.add (local.get $even) (f32.load
              (i32.add (local.get $t) (i32.shl (i32.and (local.get $quad) (i32.const 255)) (i32.const 2))))))
            (local.set $odd (f32.add (local.get $odd) (f32.load offset=256
              (i32.add (local.get $t) (i32.and (i32.shr_u (local.get $quad) (i32.const 6)) (i32.const 1020))))))
            (local.set $even (f32.add (local.get $even) (f32.load offset=512
              (i32.add (local.get $t) (i32.and (i32.shr_u (local.get $quad) (i32.const 14)) (i32.const 1020))))))
            (local.set $odd (f32.add (local.get $odd) (f32.load offset=768
              (i32.add (local.get $t) (i32.shl (i32.shr_u (local.get $quad) (i32.const 24)) (i32.const 2))))))
            (local.set $c (i32.add (local.get $c) (i32.const 4)))
            (local.set $t (i32.add (local.get $t) (i32.const 1024)))
            (br $quads)))
        ;; The last parts % 4 (the first of them has an even index).
        (if (i32.lt_u (local.get $c) (local.get $codeEnd))
          (then (local.set $even (f32.add (local.get $even) (f32.load
            (i32.add (local.get $t) (i32.shl (i32.load8_u (local.get $c)) (i32.const 2))))))))
        (if (i32.lt_u (i32.add (local.get $c) (i32.const 1)) (local.get $codeEnd))
          (then (local.set $odd (f32.add (local.get $odd) (f32.load offset=256
            (i32.add (local.get $t) (i32.shl (i32.load8_u offset=1 (local.get $c)) (i32.const 2))))))))
        (if (i32.lt_u (i32.add (local.get $c) (i32.const 2)) (local.get $codeEnd))
          (then (local.set $even (f32.add (local.get $even) (f32.load offset=512
            (i32.add (local.get $t) (i32.shl (i32.load8_u offset=2 (local.get $c)) (i32.const 2))))))))
        (f32.store (local.get $out) (f32.add (local.get $even) (local.get $odd)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $codes (local.get $codeEnd))
        (br $code))))

  ;; 8-bit code dot products (vector/int8-codes.ts): for each of `count` codes of `dimension` signed bytes
  ;; stored one after another from `codes`, writes to `out` (f64 each) the sum over i of query[i] * code[i],
  ;; the query being `dimension` f64 values. Bit for bit what codeCosine computes before its scale: values
  ;; i = 0, 1, 2, 3 (mod 4) are summed in f64 in four running sums (two per SIMD register), the last
  ;; dimension % 4 into the first, and the sums added in order.
  (func (export "codeDots") (param $query i32) (param $codes i32) (param $count i32) (param $dimension i32) (param $out i32)
    (local $end i32) (local $i i32) (local $whole i32) (local $q i32) (local $c i32)
    (local $sums01 v128) (local $sums23 v128) (local $quad v128) (local $first f64)
    (local.set $end (i32.add (local.get $codes) (i32.mul (local.get $count) (local.get $dimension))))
    (local.set $whole (i32.and (local.get $dimension) (i32.const -4)))
    (block $done
      (loop $code
        (br_if $done (i32.ge_u (local.get $codes) (local.get $end)))
        (local.set $sums01 (v128.const i64x2 0 0))
        (local.set $sums23 (v128.const i64x2 0 0))
        (local.set $i (i32.const 0))
        (local.set $q (local.get $query))
        (local.set $c (local.get $codes))
        (block $quadsDone
          (loop $quads
            (br_if $quadsDone (i32.ge_u (local.get $i) (local.get $whole)))
            ;; Four code bytes widened to four i32 lanes, then two f64x2.
            (local.set $quad (i32x4.extend_low_i16x8_s (i16x8.extend_low_i8x16_s (v128.load32_zero align=1 (local.get $c)))))
            (local.set $sums01 (f64x2.add (local.get $sums01)
              (f64x2.mul (v128.load align=8 (local.get $q)) (f64x2.convert_low_i32x4_s (local.get $quad)))))
            (local.set $sums23 (f64x2.add (local.get $sums23)
              (f64x2.mul (v128.load offset=16 align=8 (local.get $q))
                (f64x2.convert_low_i32x4_s (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $quad) (local.get $quad))))))
            (local.set $i (i32.add (local.get $i) (i32.const 4)))
            (local.set $q (i32.add (local.get $q) (i32.const 32)))
            (local.set $c (i32.add (local.get $c) (i32.const 4)))
            (br $quads)))
        (local.set $first (f64x2.extract_lane 0 (local.get $sums01)))
        (block $tailDone
          (loop $tail
            (br_if $tailDone (i32.ge_u (local.get $i) (local.get $dimension)))
            (local.set $first (f64.add (local.get $first)
              (f64.mul (f64.load (local.get $q)) (f64.convert_i32_s (i32.load8_s (local.get $c))))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (local.set $q (i32.add (local.get $q) (i32.const 8)))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (br $tail)))
        (f64.store (local.get $out)
          (f64.add (f64.add (f64.add (local.get $first) (f64x2.extract_lane 1 (local.get $sums01)))
            (f64x2.extract_lane 0 (local.get $sums23))) (f64x2.extract_lane 1 (local.get $sums23))))
        (local.set $out (i32.add (local.get $out) (i32.const 8)))
        (local.set $codes (local.get $c))
        (br $code))))

  ;; Float dot products (vector/k-means.ts dot): for each of `count` rows of `dimension` f32 values stored
  ;; one after another from `rows`, writes to `out` (f64 each) the sum over i of query[i] * row[i], the
  ;; query being `dimension` f64 values. Bit for bit what dot() computes: the same four running sums.
  (func (export "floatDots") (param $query i32) (param $rows i32) (param $count i32) (param $dimension i32) (param $out i32)
    (local $end i32) (local $i i32) (local $whole i32) (local $q i32) (local $r i32)
    (local $sums01 v128) (local $sums23 v128) (local $quad v128) (local $first f64)
    (local.set $end (i32.add (local.get $rows) (i32.shl (i32.mul (local.get $count) (local.get $dimension)) (i32.const 2))))
    (local.set $whole (i32.and (local.get $dimension) (i32.const -4)))
    (block $done
      (loop $row
        (br_if $done (i32.ge_u (local.get $rows) (local.get $end)))
        (local.set $sums01 (v128.const i64x2 0 0))
        (local.set $sums23 (v128.const i64x2 0 0))
        (local.set $i (i32.const 0))
        (local.set $q (local.get $query))
        (local.set $r (local.get $rows))
        (block $quadsDone
          (loop $quads
            (br_if $quadsDone (i32.ge_u (local.get $i) (local.get $whole)))
            (local.set $quad (v128.load align=4 (local.get $r)))
            (local.set $sums01 (f64x2.add (local.get $sums01)
              (f64x2.mul (v128.load align=8 (local.get $q)) (f64x2.promote_low_f32x4 (local.get $quad)))))
            (local.set $sums23 (f64x2.add (local.get $sums23)
              (f64x2.mul (v128.load offset=16 align=8 (local.get $q))
                (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $quad) (local.get $quad))))))
            (local.set $i (i32.add (local.get $i) (i32.const 4)))
            (local.set $q (i32.add (local.get $q) (i32.const 32)))
            (local.set $r (i32.add (local.get $r) (i32.const 16)))
            (br $quads)))
        (local.set $first (f64x2.extract_lane 0 (local.get $sums01)))
        (block $tailDone
          (loop $tail
            (br_if $tailDone (i32.ge_u (local.get $i) (local.get $dimension)))
            (local.set $first (f64.add (local.get $first)
              (f64.mul (f64.load (local.get $q)) (f64.promote_f32 (f32.load (local.get $r))))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (local.set $q (i32.add (local.get $q) (i32.const 8)))
            (local.set $r (i32.add (local.get $r) (i32.const 4)))
            (br $tail)))
        (f64.store (local.get $out)
          (f64.add (f64.add (f64.add (local.get $first) (f64x2.extract_lane 1 (local.get $sums01)))
            (f64x2.extract_lane 0 (local.get $sums23))) (f64x2.extract_lane 1 (local.get $sums23))))
        (local.set $out (i32.add (local.get $out) (i32.const 8)))
        (local.set $rows (local.get $r))
        (br $row))))
)
