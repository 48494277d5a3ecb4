package durable

// openFilesMove is false: Go opens files on Windows without FILE_SHARE_DELETE, so an open file
// can be neither renamed nor removed; Commit and Abort close the temporary file first.
const openFilesMove = false
