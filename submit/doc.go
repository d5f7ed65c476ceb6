package submit
