package s3store
