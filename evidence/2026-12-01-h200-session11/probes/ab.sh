set -u
cp -r /tmp/site /tmp/site-s4 && python3 probe11/s4patch.py /tmp/site-s4
for v in s5 s4 s5 s4; do
  s=/tmp/site; [ $v = s4 ] && s=/tmp/site-s4
  i=$((${i:-0}+1))
  PYTHONPATH=$s python3 -m gemmreg bench torch_ref splitk splitk_atomic --shape 128x128x32768 --dtype fp16,bf16 --out $OUT/p8/$v-$i > $OUT/p8/$v-$i.log 2>&1
  PYTHONPATH=$s python3 -m gemmreg report $OUT/p8/$v-$i --verdicts | grep "vs torch_ref" | sed "s/^/$v-$i /"
done
