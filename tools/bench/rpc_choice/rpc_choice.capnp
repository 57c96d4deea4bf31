# Object-storage data path, client <-> object storage server (benchmark only).
@0xedfd3f95967d814a;

interface ObjectStore {
  write @0 (objectId :UInt64, offset :UInt64, data :Data) -> (status :Int32, bytes :UInt64);
  read @1 (objectId :UInt64, offset :UInt64, length :UInt64) -> (status :Int32, data :Data);
}
