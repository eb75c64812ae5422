#!/bin/bash
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | grep -v Location | tail -2
export PYTHONPATH=/tmp/site GEMMREG_CACHE_DIR=/tmp/gc
python3 probe/ncu_down.py show 2>&1 | grep -v Warn | tee $OUT/choice.txt | head -40
timeout 240 ncu --clock-control none --kernel-name regex:'gemm|nvjet|xmma|cutlass' --launch-skip 0 --launch-count 4 --section SpeedOfLight --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis python3 probe/ncu_down.py > $OUT/ncu.txt 2>&1
grep -E "==PROF==|gemm|nvjet|xmma|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Shared Memory Configuration Size|Block Size|Grid Size|Executed Ipc Active|SM Busy|Issue Slots" $OUT/ncu.txt | cut -c1-160 | head -80
