#!/usr/bin/env bash
# Installs every Debian 12 package the project needs. Idempotent: skips apt when all are present.
set -euo pipefail
PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libhalide14-0-dev
  libyaml-cpp-dev libhdf5-dev hdf5-tools libboost-program-options-dev libgtest-dev
  libdnnl-dev libopenblas-dev libxxhash-dev
  pocl-opencl-icd ocl-icd-opencl-dev opencl-c-headers
  python3-h5py python3-matplotlib python3-numpy jupyter-nbconvert python3-ipykernel python3-torch python3-xxhash
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all ${#PACKAGES[@]} packages present"
