#!/bin/bash
# Builds all kernel variants (shape x register block x load order x A layout) into out/bin/ and out/asm/.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
set -e
cd "$(dirname "$0")"
SHAPES="1024,1024,1024 128,768,768 128,3072,768 128,768,3072"
# block:order pairs that keep <= 8 tiles live (no tile spills, see FINDINGS), plus 2x2:all and 1x4:all (spills) for contrast
BLOCKS="2x2:all 2x2:bj 1x4:bj 4x1:ai 1x1:bj 2x3:min 1x4:all"
for s in $SHAPES; do IFS=, read M N K <<<"$s"
  for bo in $BLOCKS; do b=${bo%:*}; o=${bo#*:}; tm=${b%x*}; tn=${b#*x}
    [ $((M % (16*tm))) -eq 0 ] && [ $((N % (16*tn))) -eq 0 ] || continue
    nice ./build.sh k_${M}_${N}_${K}_${b}_${o} $M $N $K --tm $tm --tn $tn --order $o
    nice ./build.sh k_${M}_${N}_${K}_${b}_${o}_pA $M $N $K --tm $tm --tn $tn --order $o --pack-a
  done
done
# cache blocking / loop order variants (k_<shape>_<block>_<order>[_nm][_kcKC][_pA])
for s in $SHAPES; do IFS=, read M N K <<<"$s"
  for bo in 2x2:bj 4x1:ai 2x3:min; do b=${bo%:*}; o=${bo#*:}; tm=${b%x*}; tn=${b#*x}
    [ $((M % (16*tm))) -eq 0 ] && [ $((N % (16*tn))) -eq 0 ] || continue
    for x in "nm:--nm" "kc256:--kc 256" "kc512:--kc 512"; do sfx=${x%%:*}; fl=${x#*:}
      kc=${sfx##*kc}; [[ $sfx == *kc* ]] && [ $((K % kc)) -ne 0 ] && continue
      nice ./build.sh k_${M}_${N}_${K}_${b}_${o}_${sfx} $M $N $K --tm $tm --tn $tn --order $o $fl
      nice ./build.sh k_${M}_${N}_${K}_${b}_${o}_${sfx}_pA $M $N $K --tm $tm --tn $tn --order $o $fl --pack-a
    done
  done
done
