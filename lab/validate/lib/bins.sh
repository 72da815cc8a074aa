# Sourced by lab/validate scripts that take the binaries of a device call
# (lab/validate/build-bins.sh): fikit-run, fikit-profile,
# libfikit_collector.so and libfikit_shim.so.
# unpack_bins ARCHIVE DEST: copies them into DEST from ARCHIVE, a folder
# holding them or an xz tar of them; fails as cp or tar does.
unpack_bins() {
  if [ -d "$1" ]; then
    cp -p "$1"/* "$2/"
  else
    tar -C "$2" -xJf "$1"
  fi
}
