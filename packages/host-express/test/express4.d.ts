// Express 4, installed under an alias to test the adapter against both supported majors.
// Its API for what these tests use (app.use, express.raw/json, listen) matches Express 5's types.
declare module 'express4' {
  import express from 'express';
  export default express;
}
