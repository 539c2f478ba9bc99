;; Search inner loops in WebAssembly (loaded by kernels.ts): the vector scans', and the keyword dense sum's
;; (summing posting blocks, reading the window back). `npm run build:kernels` compiles this file into
;; kernels-wasm.ts; test/search/kernels.test.ts fails when that file is out of date.
;;
;; In JavaScript the same loops pay a bounds check and a load per value and run 2-3x slower under Bun.
(module
  (memory (export "memory") 1)

  ;; Product-quantized scores (vector/pq.ts) of `blocks` blocks of 16 codes stored from `codes` in the
  ;; blocked layout (vector/pq-blocks.ts: a block holds byte 0 of its 16 codes, then byte 1, ...). A code's
  ;; byte k holds part 2k in its low four bits and part 2k + 1 in its high four. For each code, writes to
  ;; `out` (f32 each, 16 per block, in lane order) the sum over parts p of table[p * 16 + code of p], the
  ;; table being 2 * `bytes` * 16 bytes, `bytes` even. A part's 16 table bytes are one register, and
  ;; i8x16.swizzle looks 16 codes up in it at once. (i8x16.relaxed_swizzle, which skips the check for
  ;; indexes past 15, scored 100k codes 15 % faster here, 0.47 against 0.54 ms, but engines need not
  ;; support relaxed SIMD.) Table bytes are at most 63, so four parts' bytes add in 8-bit lanes; the sums
  ;; are kept in 16-bit lanes.
  (func (export "pqBlockScores") (param $codes i32) (param $blocks i32) (param $bytes i32) (param $table i32) (param $out i32)
    (local $end i32) (local $bytesEnd i32) (local $t i32) (local $first v128) (local $second v128)
    (local $sum v128) (local $low v128) (local $high v128)
    (local.set $end (i32.add (local.get $codes) (i32.shl (i32.mul (local.get $blocks) (local.get $bytes)) (i32.const 4))))
    (block $done
      (loop $block
        (br_if $done (i32.ge_u (local.get $codes) (local.get $end)))
        (local.set $low (v128.const i64x2 0 0))
        (local.set $high (v128.const i64x2 0 0))
        (local.set $t (local.get $table))
        (local.set $bytesEnd (i32.add (local.get $codes) (i32.shl (local.get $bytes) (i32.const 4))))
        (block $bytesDone
          (loop $step
            (br_if $bytesDone (i32.ge_u (local.get $codes) (local.get $bytesEnd)))
            ;; Two bytes of the 16 codes: four parts.
            (local.set $first (v128.load align=1 (local.get $codes)))
            (local.set $second (v128.load offset=16 align=1 (local.get $codes)))
            (local.set $sum (i8x16.add
              (i8x16.add
                (i8x16.swizzle (v128.load align=1 (local.get $t))
                  (v128.and (local.get $first) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15)))
                (i8x16.swizzle (v128.load offset=16 align=1 (local.get $t))
                  (v128.and (i16x8.shr_u (local.get $first) (i32.const 4)) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15))))
              (i8x16.add
                (i8x16.swizzle (v128.load offset=32 align=1 (local.get $t))
                  (v128.and (local.get $second) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15)))
                (i8x16.swizzle (v128.load offset=48 align=1 (local.get $t))
                  (v128.and (i16x8.shr_u (local.get $second) (i32.const 4)) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15))))))
            (local.set $low (i16x8.add (local.get $low) (i16x8.extend_low_i8x16_u (local.get $sum))))
            (local.set $high (i16x8.add (local.get $high) (i16x8.extend_high_i8x16_u (local.get $sum))))
            (local.set $codes (i32.add (local.get $codes) (i32.const 32)))
            (local.set $t (i32.add (local.get $t) (i32.const 64)))
            (br $step)))
        (v128.store align=4 (local.get $out) (f32x4.convert_i32x4_u (i32x4.extend_low_i16x8_u (local.get $low))))
        (v128.store offset=16 align=4 (local.get $out) (f32x4.convert_i32x4_u (i32x4.extend_high_i16x8_u (local.get $low))))
        (v128.store offset=32 align=4 (local.get $out) (f32x4.convert_i32x4_u (i32x4.extend_low_i16x8_u (local.get $high))))
        (v128.store offset=48 align=4 (local.get $out) (f32x4.convert_i32x4_u (i32x4.extend_high_i16x8_u (local.get $high))))
        (local.set $out (i32.add (local.get $out) (i32.const 64)))
        (br $block))))

  ;; 8-bit code dot products (vector/int8-codes.ts): for each of `count` codes of `dimension` signed bytes
  ;; stored one after another from `codes`, writes to `out` (f64 each) the sum over i of query[i] * code[i],
  ;; the query being `dimension` signed 16-bit values. Eight products a step (i32x4.dot_i16x8_s), the last
  ;; dimension % 8 one by one; the sum is an integer within 32 bits (queryCodes), exactly codeCosine's.
  (func (export "codeDots") (param $query i32) (param $codes i32) (param $count i32) (param $dimension i32) (param $out i32)
    (local $end i32) (local $i i32) (local $whole i32) (local $q i32) (local $c i32)
    (local $sums v128) (local $sum i32)
    (local.set $end (i32.add (local.get $codes) (i32.mul (local.get $count) (local.get $dimension))))
    (local.set $whole (i32.and (local.get $dimension) (i32.const -8)))
    (block $done
      (loop $code
        (br_if $done (i32.ge_u (local.get $codes) (local.get $end)))
        (local.set $sums (v128.const i64x2 0 0))
        (local.set $i (i32.const 0))
        (local.set $q (local.get $query))
        (local.set $c (local.get $codes))
        (block $eightsDone
          (loop $eights
            (br_if $eightsDone (i32.ge_u (local.get $i) (local.get $whole)))
            (local.set $sums (i32x4.add (local.get $sums)
              (i32x4.dot_i16x8_s (v128.load align=2 (local.get $q)) (v128.load8x8_s align=1 (local.get $c)))))
            (local.set $i (i32.add (local.get $i) (i32.const 8)))
            (local.set $q (i32.add (local.get $q) (i32.const 16)))
            (local.set $c (i32.add (local.get $c) (i32.const 8)))
            (br $eights)))
        (local.set $sum (i32.add
          (i32.add (i32x4.extract_lane 0 (local.get $sums)) (i32x4.extract_lane 1 (local.get $sums)))
          (i32.add (i32x4.extract_lane 2 (local.get $sums)) (i32x4.extract_lane 3 (local.get $sums)))))
        (block $tailDone
          (loop $tail
            (br_if $tailDone (i32.ge_u (local.get $i) (local.get $dimension)))
            (local.set $sum (i32.add (local.get $sum)
              (i32.mul (i32.load16_s (local.get $q)) (i32.load8_s (local.get $c)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (local.set $q (i32.add (local.get $q) (i32.const 2)))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (br $tail)))
        (f64.store (local.get $out) (f64.convert_i32_s (local.get $sum)))
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

  ;; The first f64 in [at, end) (byte addresses, 8 apart) greater than `threshold`: its address, or `end`.
  ;; Four values a step, compared two per register (keyword/dense-sum.ts reads a window of scores back
  ;; with it: most are below the threshold, and JavaScript compared them one by one at twice the cost).
  ;; Every value it passes over is set to 0 on the way, so a window read back with it is all zeros again
  ;; but for the values it returned (their caller clears each as it takes it): the dense sum needs no pass
  ;; of its own to reset the window, the stores going to cache lines the loads have just brought in.
  (func (export "takeAbove") (param $at i32) (param $end i32) (param $threshold f64) (result i32)
    (local $t v128) (local $zero v128)
    (local.set $t (f64x2.splat (local.get $threshold)))
    (block $done
      (loop $quads
        (br_if $done (i32.gt_u (i32.add (local.get $at) (i32.const 32)) (local.get $end)))
        (br_if $done (v128.any_true (v128.or
          (f64x2.gt (v128.load align=8 (local.get $at)) (local.get $t))
          (f64x2.gt (v128.load offset=16 align=8 (local.get $at)) (local.get $t)))))
        (v128.store align=8 (local.get $at) (local.get $zero))
        (v128.store offset=16 align=8 (local.get $at) (local.get $zero))
        (local.set $at (i32.add (local.get $at) (i32.const 32)))
        (br $quads)))
    (block $found
      (loop $one
        (br_if $found (i32.ge_u (local.get $at) (local.get $end)))
        (br_if $found (f64.gt (f64.load (local.get $at)) (local.get $threshold)))
        (f64.store (local.get $at) (f64.const 0))
        (local.set $at (i32.add (local.get $at) (i32.const 8)))
        (br $one)))
    (local.get $at))

  ;; The first f32 in [at, end) (byte addresses, 4 apart) greater than `threshold`: its address, or `end`.
  ;; Eight values a step, compared four per register (vector/pq-scan.ts reads a batch of product-quantized
  ;; scores back with it: once a search holds its candidates, few beat the weakest of them).
  (func (export "firstAboveF32") (param $at i32) (param $end i32) (param $threshold f32) (result i32)
    (local $t v128)
    (local.set $t (f32x4.splat (local.get $threshold)))
    (block $done
      (loop $eights
        (br_if $done (i32.gt_u (i32.add (local.get $at) (i32.const 32)) (local.get $end)))
        (br_if $done (v128.any_true (v128.or
          (f32x4.gt (v128.load align=4 (local.get $at)) (local.get $t))
          (f32x4.gt (v128.load offset=16 align=4 (local.get $at)) (local.get $t)))))
        (local.set $at (i32.add (local.get $at) (i32.const 32)))
        (br $eights)))
    (block $found
      (loop $one
        (br_if $found (i32.ge_u (local.get $at) (local.get $end)))
        (br_if $found (f32.gt (f32.load (local.get $at)) (local.get $threshold)))
        (local.set $at (i32.add (local.get $at) (i32.const 4)))
        (br $one)))
    (local.get $at))

  ;; `count` values of `bits` bits each (0-32), packed least significant bit first from `src`, unpacked to
  ;; u32s from `out`; up to 7 more are written past them (garbage), and up to 16 bytes past the packed ones
  ;; are read. Up to 25 bits, eight values a step: a group of four lanes takes the four bytes that hold
  ;; each value (i8x16.swizzle), multiplies each lane by 2^(7 - its value's first bit in its first byte)
  ;; (a left shift that differs by lane, which WebAssembly has no instruction for), then shifts all
  ;; lanes down by 7 and masks: the value's bits sit at 7 to 7 + bits - 1 <= 31. The swizzle patterns
  ;; and multipliers of each width are the 80-byte entries of the table at `table` (kernels.ts
  ;; writeUnpackTable). Wider values are read one by one, each with the word after it (i64.load).
  (func $unpack (export "unpackValues") (param $src i32) (param $bits i32) (param $count i32) (param $out i32) (param $table i32)
    (local $end i32) (local $entry i32) (local $offB i32) (local $mask v128)
    (local $patA v128) (local $mulA v128) (local $patB v128) (local $mulB v128) (local $bit i32) (local $wideMask i64)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 2))))
    (if (i32.gt_u (local.get $bits) (i32.const 25))
      (then
        (local.set $wideMask (i64.sub (i64.shl (i64.const 1) (i64.extend_i32_u (local.get $bits))) (i64.const 1)))
        (block $wideDone
          (loop $wide
            (br_if $wideDone (i32.ge_u (local.get $out) (local.get $end)))
            (i32.store (local.get $out)
              (i32.wrap_i64 (i64.and (local.get $wideMask)
                (i64.shr_u
                  (i64.load align=4 (i32.add (local.get $src) (i32.shl (i32.shr_u (local.get $bit) (i32.const 5)) (i32.const 2))))
                  (i64.extend_i32_u (i32.and (local.get $bit) (i32.const 31)))))))
            (local.set $bit (i32.add (local.get $bit) (local.get $bits)))
            (local.set $out (i32.add (local.get $out) (i32.const 4)))
            (br $wide)))
        (return)))
    (local.set $entry (i32.add (local.get $table) (i32.mul (local.get $bits) (i32.const 80))))
    (local.set $patA (v128.load align=1 (local.get $entry)))
    (local.set $mulA (v128.load offset=16 align=1 (local.get $entry)))
    (local.set $patB (v128.load offset=32 align=1 (local.get $entry)))
    (local.set $mulB (v128.load offset=48 align=1 (local.get $entry)))
    (local.set $offB (i32.load offset=64 align=1 (local.get $entry)))
    (local.set $mask (i32x4.splat (i32.sub (i32.shl (i32.const 1) (local.get $bits)) (i32.const 1))))
    (block $done
      (loop $groups
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (v128.store align=4 (local.get $out)
          (v128.and (local.get $mask)
            (i32x4.shr_u
              (i32x4.mul (i8x16.swizzle (v128.load align=1 (local.get $src)) (local.get $patA)) (local.get $mulA))
              (i32.const 7))))
        (v128.store offset=16 align=4 (local.get $out)
          (v128.and (local.get $mask)
            (i32x4.shr_u
              (i32x4.mul (i8x16.swizzle (v128.load align=1 (i32.add (local.get $src) (local.get $offB))) (local.get $patB)) (local.get $mulB))
              (i32.const 7))))
        (local.set $src (i32.add (local.get $src) (local.get $bits)))
        (local.set $out (i32.add (local.get $out) (i32.const 32)))
        (br $groups))))

  ;; BM25 contributions of `blocks` consecutive posting blocks of one term (keyword/segment-format.ts),
  ;; stored from `at`, added into a window of scores: the f64 at byte 8 × (slot - low), from address 0.
  ;; Each block holds 128 postings but the last, which holds `lastCount`; `slot` is the slot before the
  ;; first block's first (its first gap counts from it); the window's chunk lengths are u32 from
  ;; `lengths`, by slot - low. A posting adds factor * tf / (tf + (normBase + normPerTerm * length)),
  ;; bit for bit what posting-cursor.ts computes. A block's gaps and tfs are unpacked first ($unpack),
  ;; into the room kernels.ts SUM_WORK_BYTES gives at `work`: the unpacking table, then 136 u32s for
  ;; each. Before, each posting read its gap and its tf with an i64.load and two shifts: at 1M chunks,
  ;; the evaluation queries' keyword sides (top 100, one shard) took 2.46-2.71 ms a query by the dense
  ;; sum, 1.85-2.10 with this unpacking (interleaved runs).
  (func (export "sumPostingBlocks") (param $at i32) (param $blocks i32) (param $lastCount i32) (param $slot i32)
    (param $low i32) (param $lengths i32) (param $factor f64) (param $normBase f64) (param $normPerTerm f64) (param $work i32)
    (local $count i32) (local $gapBits i32) (local $tfBits i32) (local $tfsAt i32) (local $offset i32) (local $tf f64)
    (local $gaps i32) (local $tfs i32) (local $gap i32) (local $gapsEnd i32)
    (local $offset2 i32) (local $tf2 v128) (local $pair v128) (local $factor2 v128) (local $normBase2 v128) (local $normPerTerm2 v128)
    (local.set $factor2 (f64x2.splat (local.get $factor)))
    (local.set $normBase2 (f64x2.splat (local.get $normBase)))
    (local.set $normPerTerm2 (f64x2.splat (local.get $normPerTerm)))
    (local.set $gaps (i32.add (local.get $work) (i32.const 2080)))
    (local.set $tfs (i32.add (local.get $gaps) (i32.const 544)))
    (block $done
      (loop $block
        (br_if $done (i32.eqz (local.get $blocks)))
        (local.set $blocks (i32.sub (local.get $blocks) (i32.const 1)))
        (local.set $count (select (local.get $lastCount) (i32.const 128) (i32.eqz (local.get $blocks))))
        (local.set $gapBits (i32.and (i32.load (local.get $at)) (i32.const 255)))
        (local.set $tfBits (i32.shr_u (i32.load (local.get $at)) (i32.const 8)))
        (local.set $at (i32.add (local.get $at) (i32.const 4)))
        ;; The tfs follow the gaps, padded to a whole word.
        (local.set $tfsAt (i32.add (local.get $at)
          (i32.shl (i32.shr_u (i32.add (i32.mul (local.get $count) (local.get $gapBits)) (i32.const 31)) (i32.const 5)) (i32.const 2))))
        (call $unpack (local.get $at) (local.get $gapBits) (local.get $count) (local.get $gaps) (local.get $work))
        (call $unpack (local.get $tfsAt) (local.get $tfBits) (local.get $count) (local.get $tfs) (local.get $work))
        (local.set $gap (local.get $gaps))
        (local.set $gapsEnd (i32.add (local.get $gaps) (i32.shl (local.get $count) (i32.const 2))))
        ;; Two postings a step: their two divisions in one f64x2.div (lane by lane the same operations,
        ;; so the same bits as one at a time), then each added to its own slot's score.
        (block $pairsDone
          (loop $pair
            (br_if $pairsDone (i32.gt_u (i32.add (local.get $gap) (i32.const 8)) (local.get $gapsEnd)))
            (local.set $slot (i32.add (i32.add (local.get $slot) (i32.const 1)) (i32.load (local.get $gap))))
            (local.set $offset (i32.sub (local.get $slot) (local.get $low)))
            (local.set $slot (i32.add (i32.add (local.get $slot) (i32.const 1)) (i32.load offset=4 (local.get $gap))))
            (local.set $offset2 (i32.sub (local.get $slot) (local.get $low)))
            (local.set $tf2 (f64x2.convert_low_i32x4_u (i32x4.add (v128.load64_zero offset=544 align=4 (local.get $gap)) (i32x4.splat (i32.const 1)))))
            (local.set $pair
              (f64x2.div (f64x2.mul (local.get $factor2) (local.get $tf2))
                (f64x2.add (local.get $tf2)
                  (f64x2.add (local.get $normBase2)
                    (f64x2.mul (local.get $normPerTerm2)
                      (f64x2.convert_low_i32x4_u
                        (i32x4.replace_lane 1
                          (i32x4.splat (i32.load (i32.add (local.get $lengths) (i32.shl (local.get $offset) (i32.const 2)))))
                          (i32.load (i32.add (local.get $lengths) (i32.shl (local.get $offset2) (i32.const 2)))))))))))
            (f64.store (i32.shl (local.get $offset) (i32.const 3))
              (f64.add (f64.load (i32.shl (local.get $offset) (i32.const 3))) (f64x2.extract_lane 0 (local.get $pair))))
            (f64.store (i32.shl (local.get $offset2) (i32.const 3))
              (f64.add (f64.load (i32.shl (local.get $offset2) (i32.const 3))) (f64x2.extract_lane 1 (local.get $pair))))
            (local.set $gap (i32.add (local.get $gap) (i32.const 8)))
            (br $pair)))
        (if (i32.lt_u (local.get $gap) (local.get $gapsEnd)) (then
        (loop $posting
          (local.set $slot (i32.add (i32.add (local.get $slot) (i32.const 1)) (i32.load (local.get $gap))))
          (local.set $tf (f64.convert_i32_u (i32.add (i32.const 1) (i32.load offset=544 (local.get $gap)))))
          (local.set $offset (i32.sub (local.get $slot) (local.get $low)))
          (f64.store (i32.shl (local.get $offset) (i32.const 3))
            (f64.add (f64.load (i32.shl (local.get $offset) (i32.const 3)))
              (f64.div (f64.mul (local.get $factor) (local.get $tf))
                (f64.add (local.get $tf)
                  (f64.add (local.get $normBase)
                    (f64.mul (local.get $normPerTerm)
                      (f64.convert_i32_u (i32.load (i32.add (local.get $lengths) (i32.shl (local.get $offset) (i32.const 2)))))))))))
          (br_if $posting (i32.lt_u (local.tee $gap (i32.add (local.get $gap) (i32.const 4))) (local.get $gapsEnd))))))
        (local.set $at (i32.add (local.get $tfsAt)
          (i32.shl (i32.shr_u (i32.add (i32.mul (local.get $count) (local.get $tfBits)) (i32.const 31)) (i32.const 5)) (i32.const 2))))
        (br $block)))))
