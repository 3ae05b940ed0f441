#!/usr/bin/env python3
# Functions over N lines (default 100) in the .rs files under a folder: from a `fn` line
# to its closing brace, braces in strings and comments left out. bench/structure.sh runs it.
import re,sys,os
root=sys.argv[1]; lim=int(sys.argv[2]) if len(sys.argv)>2 else 100
pat=re.compile(r'^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"C"\s+)?fn\s+(\w+)')
out=[]
for d,_,fs in os.walk(root):
    if '/target' in d or '/.git' in d: continue
    for f in fs:
        if not f.endswith('.rs'): continue
        p=os.path.join(d,f); L=open(p,errors='replace').read().split('\n')
        i=0
        while i<len(L):
            m=pat.match(L[i])
            if m:
                depth=0; started=False; j=i
                while j<len(L):
                    s=re.sub(r'"(\\.|[^"\\])*"','""',L[j]); s=re.sub(r"'(\\.|[^'\\])'","''",s); s=s.split('//')[0]
                    if not started and ';' in s and '{' not in s: break
                    for c in s:
                        if c=='{': depth+=1; started=True
                        elif c=='}': depth-=1
                    if started and depth<=0: break
                    j+=1
                n=j-i+1
                if started and n>lim: out.append((n,p,i+1,m.group(7)))
            i+=1
out.sort(reverse=True)
for n,p,l,name in out: print(n,p+':'+str(l),name)
print(len(out),'functions over',lim)
