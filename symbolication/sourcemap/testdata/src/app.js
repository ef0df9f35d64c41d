export function computePrimes(limit) {
  let count = 0;
  for (let n = 2; n < limit; n++) {
    if (isPrime(n)) count++;
  }
  return count;
}

function isPrime(candidate) {
  for (let d = 2; d * d <= candidate; d++) {
    if (candidate % d === 0) return false;
  }
  return true;
}

export const hashText = (text) => {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
  return h;
};

class Matrix {
  multiplyBy(other) { return other * 2; }
}
console.log(computePrimes(100), hashText("abc"), new Matrix().multiplyBy(3));
